package graph_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

func obs(gate ...graph.NodeID) graph.Observation {
	return graph.Observation{Gate: graph.NewGate(gate)}
}

func ids(c graph.Cycle) []graph.NodeID {
	var out []graph.NodeID
	for _, e := range c {
		out = append(out, e.From)
	}
	return out
}

func TestTwoAndThreeCycles(t *testing.T) {
	var g graph.Graph
	if _, isNew, c := g.Add(1, 2, obs(), nil); !isNew || c != nil {
		t.Fatal("first edge")
	}
	if _, isNew, c := g.Add(1, 2, obs(), nil); isNew || c != nil {
		t.Fatal("repeated edge is new or cyclic")
	}
	_, _, c := g.Add(2, 1, obs(), nil)
	if got := ids(c); !slices.Equal(got, []graph.NodeID{2, 1}) {
		t.Fatalf("ABBA cycle = %v", got)
	}

	var h graph.Graph
	h.Add(10, 20, obs(), nil)
	h.Add(20, 30, obs(), nil)
	_, _, c = h.Add(30, 10, obs(), nil)
	if got := ids(c); !slices.Equal(got, []graph.NodeID{30, 10, 20}) {
		t.Fatalf("3-cycle = %v", got)
	}
	if k := c.Key(); !slices.Equal(k, []graph.NodeID{10, 20, 30}) {
		t.Fatalf("Key = %v", k)
	}
}

func TestCyclesFoundAfterFirst(t *testing.T) {
	var g graph.Graph
	g.Add(1, 2, obs(), nil)
	if _, _, c := g.Add(2, 1, obs(), nil); c == nil {
		t.Fatal("first cycle missed")
	}
	g.Add(2, 3, obs(), nil)
	if _, _, c := g.Add(3, 1, obs(), nil); len(c) != 3 {
		t.Fatalf("second cycle = %v", ids(c))
	}
}

func TestGateSuppressesThenLosesGate(t *testing.T) {
	var g graph.Graph
	const G = 99
	g.Add(1, 2, obs(G), nil)
	if _, _, c := g.Add(2, 1, obs(G), nil); c != nil {
		t.Fatalf("gated cycle reported: %v", ids(c))
	}
	// A different common gate on each edge does not protect.
	var h graph.Graph
	h.Add(1, 2, obs(98), nil)
	if _, _, c := h.Add(2, 1, obs(99), nil); c == nil {
		t.Fatal("cycle under different gates missed")
	}
	// The gated edge is later seen without its gate: now it can deadlock.
	if _, _, c := g.Add(2, 1, obs(), nil); c == nil {
		t.Fatal("cycle missed once the gate was lost")
	}
}

func TestCanBlock(t *testing.T) {
	var g graph.Graph
	never := func(e *graph.Edge) bool { return e.ToWrite }
	g.Add(1, 2, graph.Observation{ToRead: true}, never)
	if _, _, c := g.Add(2, 1, graph.Observation{ToRead: true}, never); c != nil {
		t.Fatal("read-only cycle reported though canBlock says no")
	}
	if _, _, c := g.Add(2, 1, graph.Observation{}, never); c != nil {
		t.Fatal("1->2 still cannot block")
	}
	if _, _, c := g.Add(1, 2, graph.Observation{}, never); c == nil {
		t.Fatal("cycle missed once both edges can block")
	}
}

func TestRandomDAGHasNoFalseCycleAndClosingEdgeFound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const nodes, edges = 300, 3000
	perm := r.Perm(nodes) // topological position of each node
	var g graph.Graph
	for range edges {
		a, b := r.IntN(nodes), r.IntN(nodes)
		if a == b {
			continue
		}
		if perm[a] > perm[b] {
			a, b = b, a
		}
		if _, _, c := g.Add(graph.NodeID(a), graph.NodeID(b), obs(), nil); c != nil {
			t.Fatalf("false cycle %v in a DAG", ids(c))
		}
	}
	// Build a long path and close it.
	order := make([]int, nodes)
	for n, pos := range perm {
		order[pos] = n
	}
	for i := 0; i+1 < 10; i++ {
		g.Add(graph.NodeID(order[i]), graph.NodeID(order[i+1]), obs(), nil)
	}
	_, _, c := g.Add(graph.NodeID(order[9]), graph.NodeID(order[0]), obs(), nil)
	if c == nil {
		t.Fatal("closing edge not detected")
	}
	for i, e := range c {
		if next := c[(i+1)%len(c)]; e.To != next.From {
			t.Fatalf("cycle not connected: %v", ids(c))
		}
	}
}

func TestRemoveRestoresOrder(t *testing.T) {
	var g graph.Graph
	g.Add(1, 2, obs(), nil)
	g.Add(2, 3, obs(), nil)
	if _, _, c := g.Add(3, 1, obs(), nil); c == nil {
		t.Fatal("cycle missed")
	}
	g.Remove(2)
	if g.Len() != 2 || g.Edges() != 1 {
		t.Fatalf("after Remove: %d nodes %d edges", g.Len(), g.Edges())
	}
	if g.Edge(1, 2, false) != nil || g.Lookup(2) != nil {
		t.Fatal("node 2 still present")
	}
	// Acyclic again: 1->3 is a fresh edge that closes 3->1.
	if _, _, c := g.Add(1, 3, obs(), nil); c == nil {
		t.Fatal("cycle after removal missed")
	}
	g.Reset()
	if g.Len() != 0 || g.Edges() != 0 {
		t.Fatal("Reset kept nodes")
	}
}

// A graph that keeps a cycle while short-lived locks come and go (a
// reported inversion between two long-lived locks; objects made, locked
// under them and collected) recomputes its order by the removals, not at
// each: each costs the whole graph, and 10,000 removals from a graph of
// 1,000 nodes would cost 10 million steps.
func TestChurnUnderACycleRecomputesTheOrderByTheRemovals(t *testing.T) {
	var g graph.Graph
	const long, churn = 1000, 10000
	for i := graph.NodeID(1); i < long; i++ {
		g.Add(i, i+1, obs(), nil)
	}
	if _, _, c := g.Add(long, 1, obs(), nil); c == nil {
		t.Fatal("cycle missed")
	}
	for i := graph.NodeID(long + 1); i <= long+churn; i++ {
		g.Add(1, i, obs(), nil)
		g.Remove(i)
	}
	if got, most := g.Retopos(), churn*4/long+1; got > most {
		t.Fatalf("order recomputed %d times for %d removals, want at most %d", got, churn, most)
	}
	// The cycle still holds; once it is gone, the order comes back and a
	// new cycle is found as before.
	g.Remove(long)
	if g.Cyclic() {
		t.Fatal("cyclic with no cycle's edge left")
	}
	if _, _, c := g.Add(long-1, 1, obs(), nil); c == nil {
		t.Fatal("cycle after the churn missed")
	}
}

// Removals are not the only way back to the order: a graph whose last
// cycle is gone, though edges added while it stood remain, searches at
// each new edge; once those searches have visited as much as the graph
// holds, it recomputes the order, and new edges that agree with it cost
// no search again. (Found in review: 4,000 such edges took 200 ms.)
func TestBreakingTheLastCycleBringsTheOrderBackByTheSearches(t *testing.T) {
	var g graph.Graph
	const n = 4000
	g.Add(1, 2, obs(), nil)
	if _, _, c := g.Add(2, 1, obs(), nil); c == nil {
		t.Fatal("cycle missed")
	}
	for i := graph.NodeID(10); i < 10+n; i++ {
		g.Add(i, i+1, obs(), nil) // while the cycle stands: flagged
	}
	g.Remove(2) // the only cycle is gone, not the flagged edges
	if !g.Cyclic() {
		t.Fatal("a quarter of the nodes was not removed: the order should wait")
	}
	for i := graph.NodeID(10); i < 10+n-2; i++ {
		g.Add(i, i+2, obs(), nil) // agrees with the order
	}
	if g.Cyclic() || g.Retopos() == 0 {
		t.Fatalf("still searching at every edge: cyclic %v, orders recomputed %d", g.Cyclic(), g.Retopos())
	}
	if _, _, c := g.Add(10+n, 10, obs(), nil); c == nil {
		t.Fatal("a cycle closed after the order came back was missed")
	}
}

func BenchmarkAddAcyclic(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const nodes = 10000
	perm := r.Perm(nodes)
	var g graph.Graph
	for b.Loop() {
		a, c := r.IntN(nodes), r.IntN(nodes)
		if a == c {
			continue
		}
		if perm[a] > perm[c] {
			a, c = c, a
		}
		g.Add(graph.NodeID(a), graph.NodeID(c), obs(), nil)
	}
}

// TestWritersGateHoldsBackReadEdge: X->Y taken for reading only, Y->X
// from a read hold of Y under G; every writer of Y holds G, so no writer
// of Y can queue while Y->X is taken: no cycle, until Y's writers' gate
// opens.
func TestWritersGateHoldsBackReadEdge(t *testing.T) {
	const x, y, gate = 1, 2, 9
	var g graph.Graph
	g.Node(x, "")
	g.Node(y, "")
	g.SetWritersGate(y, graph.NewGate([]graph.NodeID{gate}))
	g.Add(y, x, fromRead(obs(gate)), nil)
	e, _, c := g.Add(x, y, toRead(obs()), nil)
	if c != nil {
		t.Fatalf("gated read edge closed %v", ids(c))
	}
	g.SetWritersGate(y, graph.Gate{}) // a write of Y without G
	if c := g.Recheck(e, nil); len(c) != 2 {
		t.Fatalf("after the gate opened, Recheck = %v", ids(c))
	}
	// An edge into Y taken for writing blocks on readers: no writers'
	// gate applies.
	var h graph.Graph
	h.Node(y, "")
	h.SetWritersGate(y, graph.NewGate([]graph.NodeID{gate}))
	h.Add(y, x, fromRead(obs(gate)), nil)
	if _, _, c := h.Add(x, y, obs(), nil); len(c) != 2 {
		t.Fatalf("write edge into Y: cycle = %v", ids(c))
	}
}

func toRead(o graph.Observation) graph.Observation   { o.ToRead = true; return o }
func fromRead(o graph.Observation) graph.Observation { o.FromRead = true; return o }

// TestWritersGateNotPastAWriteHold: the cycle leaves Y from a write hold
// of Y (G, Y, X in one goroutine): a reader of Y waits for that holder,
// not for a queued writer, and the writers' gate must not count, whichever
// edge closes the cycle and whatever the other edges are.
func TestWritersGateNotPastAWriteHold(t *testing.T) {
	const x, y, z, gate = 1, 2, 3, 9
	wg := graph.NewGate([]graph.NodeID{gate})
	for _, readFirst := range []bool{false, true} {
		var g graph.Graph
		g.Node(y, "")
		g.SetWritersGate(y, wg)
		var c graph.Cycle
		if readFirst {
			g.Add(x, y, toRead(obs()), nil)
			_, _, c = g.Add(y, x, obs(gate), nil)
		} else {
			g.Add(y, x, obs(gate), nil)
			_, _, c = g.Add(x, y, toRead(obs()), nil)
		}
		if len(c) != 2 {
			t.Fatalf("readFirst=%v: cycle = %v", readFirst, ids(c))
		}
	}
	// Y->X seen from a read hold first: held back; then from a write hold
	// too: the merge reports it.
	var g graph.Graph
	g.Node(y, "")
	g.SetWritersGate(y, wg)
	g.Add(y, x, fromRead(obs(gate)), nil)
	if _, _, c := g.Add(x, y, toRead(obs()), nil); c != nil {
		t.Fatalf("held back: %v", ids(c))
	}
	if _, _, c := g.Add(y, x, obs(gate), nil); len(c) != 2 {
		t.Fatalf("after a write hold of Y took Y->X: %v", ids(c))
	}
	// A longer cycle: X->Y(read), Y(read)->Z under G, Z->X. Both ways of
	// counting X->Y are tried; the read hold of Y is what follows, so the
	// gate holds (Y->Z holds G). With Y->Z from a write hold it does not.
	for _, write := range []bool{false, true} {
		var g graph.Graph
		g.Node(y, "")
		g.SetWritersGate(y, wg)
		yz := obs(gate)
		if !write {
			yz = fromRead(yz)
		}
		g.Add(y, z, yz, nil)
		g.Add(z, x, obs(), nil)
		_, _, c := g.Add(x, y, toRead(obs()), nil)
		if write != (len(c) == 3) {
			t.Fatalf("Y->Z from a write hold %v: cycle = %v", write, ids(c))
		}
	}
	// The read edge in the middle, the edge out of Y closing the cycle.
	for _, write := range []bool{false, true} {
		var g graph.Graph
		g.Node(y, "")
		g.SetWritersGate(y, wg)
		g.Add(z, x, obs(), nil)
		g.Add(x, y, toRead(obs()), nil)
		yz := obs(gate)
		if !write {
			yz = fromRead(yz)
		}
		_, _, c := g.Add(y, z, yz, nil)
		if write != (len(c) == 3) {
			t.Fatalf("closing Y->Z from a write hold %v: cycle = %v", write, ids(c))
		}
	}
}

func TestGateIntersectEither(t *testing.T) {
	g := graph.NewGate([]graph.NodeID{1, 2, 3, 4})
	a, b := graph.NewGate([]graph.NodeID{1, 4}), graph.NewGate([]graph.NodeID{2, 4, 7})
	if got := g.IntersectEither(a, b).IDs(); !slices.Equal(got, []graph.NodeID{1, 2, 4}) {
		t.Fatalf("IntersectEither = %v", got)
	}
	if r := g.IntersectEither(g, graph.Gate{}); !graph.SharesList(r, g) {
		t.Fatal("IntersectEither must not allocate when it keeps every id")
	}
	if got := g.Without(1).IntersectEither(a, graph.Gate{}).IDs(); !slices.Equal(got, []graph.NodeID{4}) {
		t.Fatalf("IntersectEither of a Without = %v", got)
	}
}

func TestGateUnion(t *testing.T) {
	a, b := graph.NewGate([]graph.NodeID{3, 1}), graph.NewGate([]graph.NodeID{2, 3})
	if got := a.Union(b).IDs(); !slices.Equal(got, []graph.NodeID{1, 2, 3}) {
		t.Fatalf("Union = %v", got)
	}
	if got := a.Union(graph.Gate{}).IDs(); !slices.Equal(got, []graph.NodeID{1, 3}) {
		t.Fatalf("Union with empty = %v", got)
	}
	if got := a.Without(1).Union(b.Without(2)).IDs(); !slices.Equal(got, []graph.NodeID{3}) {
		t.Fatalf("Union of Withouts = %v", got)
	}
}

// TestSightingsPerMode: bbolt's meta -> mmap, for reading with nothing
// else held (beginTx) and for writing under rw (Close), is two edges,
// each with its own gate and first sighting. With mmap(read) -> meta
// under rw, neither closes a cycle that can deadlock: the write edge
// shares rw; the read edge is counted with mmap's writers' gate {rw}.
// Merged, the pair was an edge for writing with no gate, and reported.
// The write edge seen without rw is reported.
func TestSightingsPerMode(t *testing.T) {
	const rw, meta, mmap = 1, 2, 3
	var g graph.Graph
	g.Node(mmap, "")
	g.SetWritersGate(mmap, gateOf(rw))
	read, write := toRead(fromLock(obs(), meta)), fromLock(obs(rw), meta)
	read.Stack, write.Stack = 10, 20
	g.Add(meta, mmap, read, nil)
	g.Add(meta, mmap, write, nil)
	r, w := g.Edge(meta, mmap, true), g.Edge(meta, mmap, false)
	switch {
	case g.Edges() != 2 || r == nil || w == nil:
		t.Fatalf("%d edges, read %v, write %v", g.Edges(), r, w)
	case r.ToWrite || r.Gate.Len() != 0 || r.First.Stack != 10:
		t.Fatalf("read edge: write %v, gate %v, stack %d", r.ToWrite, r.Gate.IDs(), r.First.Stack)
	case !w.ToWrite || !slices.Equal(w.Gate.IDs(), []graph.NodeID{rw}) || w.First.Stack != 20:
		t.Fatalf("write edge: write %v, gate %v, stack %d", w.ToWrite, w.Gate.IDs(), w.First.Stack)
	}
	if _, _, c := g.Add(mmap, meta, fromRead(obs(rw)), nil); c != nil {
		t.Fatalf("cycle through %v", ids(c))
	}
	for _, e := range []*graph.Edge{r, w} {
		if c := g.Recheck(e, nil); c != nil {
			t.Fatalf("Recheck(write %v) = %v", e.ToWrite, ids(c))
		}
	}
	// A write sighting without rw goes to the write edge: the read edge
	// is as it was.
	g.Add(meta, mmap, obs(), nil)
	if r.ToWrite || r.Gate.Len() != 0 || g.Edges() != 3 {
		t.Fatalf("read edge changed: write %v, gate %v; %d edges", r.ToWrite, r.Gate.IDs(), g.Edges())
	}
	var h graph.Graph
	h.Node(mmap, "")
	h.SetWritersGate(mmap, gateOf(rw))
	h.Add(meta, mmap, read, nil)
	h.Add(meta, mmap, write, nil)
	h.Add(mmap, meta, fromRead(obs(rw)), nil)
	e, _, c := h.Add(meta, mmap, fromLock(obs(), meta), nil) // Close without rw
	if len(c) != 2 || c[0] != e || !e.ToWrite {
		t.Fatalf("write edge without rw: cycle = %v", ids(c))
	}
	h.Remove(meta)
	if h.Edges() != 0 {
		t.Fatalf("%d edges after Remove", h.Edges())
	}
}

// The sighting a report shows is never one taken under more locks than
// the one shown: bbolt's mmap(read) -> meta, seen from a read transaction
// with nothing else held, then from a write transaction's begin under rw
// from a write hold of another lock, still shows the first. Shown, the
// second would look excluded by rw from Close's meta -> mmap, which holds
// rw too, though the cycle is real through the first. A sighting under
// fewer locks is shown in its place.
func TestTheSightingShownIsNeverUnderMoreLocks(t *testing.T) {
	const rw, meta, mmap, other = 1, 2, 3, 4
	var g graph.Graph
	free := fromRead(obs())
	free.Stack = 10
	g.Add(mmap, meta, free, nil)
	gated := fromLock(obs(rw), other) // from a write hold: it loosens the edge
	gated.Stack = 20
	g.Add(mmap, meta, gated, nil)
	e := g.Edge(mmap, meta, false)
	if !e.FromWrite || e.Gate.Len() != 0 {
		t.Fatalf("merged edge: from write %v, gate %v", e.FromWrite, e.Gate.IDs())
	}
	if e.First.Stack != 10 {
		t.Fatalf("shows the sighting at stack %d, taken under rw; want 10, taken under nothing", e.First.Stack)
	}

	var h graph.Graph
	gated.Stack, free.Stack = 30, 40
	h.Add(mmap, meta, gated, nil)
	h.Add(mmap, meta, free, nil)
	if e := h.Edge(mmap, meta, false); e.First.Stack != 40 {
		t.Fatalf("shows the sighting at stack %d; want 40, the one that narrowed the gate", e.First.Stack)
	}
}

// TestAnEdgeThatClosesNoCycleIsNotSearched: once the graph holds a cycle
// (one a common gate holds back), its order is not kept and each new edge
// is searched; an edge into a lock with no edge out, or out of one with
// no edge in (a new object's lock), closes none and costs no search. A
// cycle through it is found by the edge that closes it later, and the
// order comes back once the cycle is gone.
func TestAnEdgeThatClosesNoCycleIsNotSearched(t *testing.T) {
	var g graph.Graph
	for i := graph.NodeID(1); i < 200; i++ {
		g.Add(i, i+1, obs(), nil)
	}
	if _, _, c := g.Add(200, 1, obs(), nil); c == nil {
		t.Fatal("the 200-cycle was missed")
	}
	looked := 0
	count := func(*graph.Edge) bool { looked++; return true }
	if _, _, c := g.Add(100, 1000, obs(), count); c != nil || looked != 0 {
		t.Fatalf("an edge into a new lock: cycle %v, %d edges looked at", ids(c), looked)
	}
	if _, _, c := g.Add(2000, 100, obs(), count); c != nil || looked != 0 {
		t.Fatalf("an edge out of a new lock: cycle %v, %d edges looked at", ids(c), looked)
	}
	if _, _, c := g.Add(1000, 2000, obs(), count); len(c) != 3 || looked == 0 {
		t.Fatalf("the cycle 100 -> 1000 -> 2000 -> 100 = %v (%d edges looked at)", ids(c), looked)
	}
	g.Remove(1000)
	g.Remove(150)
	// Acyclic again, with its order: 2000 -> 100 stands, and the edge
	// back closes a cycle found at once.
	if _, _, c := g.Add(100, 2000, obs(), nil); len(c) != 2 {
		t.Fatalf("after the removals, 100 -> 2000 -> 100 = %v", ids(c))
	}
}
