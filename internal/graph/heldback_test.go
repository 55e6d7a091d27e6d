package graph_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

func fromLock(o graph.Observation, l graph.NodeID) graph.Observation { o.FromLock = l; return o }

func gateOf(ids ...graph.NodeID) graph.Gate { return graph.NewGate(ids) }

// The ∃ rule (heldBack). Nodes are their own locks here.

// bboltCycle adds, in the order given, the edges of bbolt's 3-cycle
// mmap(read) -> rw -> meta -> mmap(read): 0, mmap(read)->rw (beginRWTx
// under a read tx); 1, rw->meta, taken holding rw for writing as its
// From (from a read hold of rw unless srcWrite); 2, meta->mmap(read)
// (beginTx). mmap's writers' gate is wg. It returns the first cycle an
// Add reports, and the graph.
func bboltCycle(wg graph.Gate, srcWrite bool, order []int) (graph.Cycle, *graph.Graph) {
	const mmap, rw, meta = 1, 2, 3
	var g graph.Graph
	g.Node(mmap, "")
	g.SetWritersGate(mmap, wg)
	add := []func() graph.Cycle{
		func() graph.Cycle { _, _, c := g.Add(mmap, rw, fromRead(obs()), nil); return c },
		func() graph.Cycle {
			o := fromLock(obs(), rw)
			if !srcWrite {
				o = fromRead(o)
			}
			_, _, c := g.Add(rw, meta, o, nil)
			return c
		},
		func() graph.Cycle { _, _, c := g.Add(meta, mmap, toRead(fromLock(obs(), meta)), nil); return c },
	}
	for _, i := range order {
		if c := add[i](); c != nil {
			return c, &g
		}
	}
	return nil, &g
}

// TestHeldBackByOneEdge: every writer of mmap holds rw, so the reader of
// mmap can wait only for a writer that holds rw, and rw's holder waits
// for meta, not for mmap. No gate is common to all three edges, yet the
// cycle cannot deadlock. With a writer of mmap that does not hold rw it
// is reported; so it is when the edge out of mmap is from a write hold,
// or rw->meta from a read hold.
func TestHeldBackByOneEdge(t *testing.T) {
	const mmap, rw, meta = 1, 2, 3
	gated := gateOf(rw)
	orders := [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}}
	for _, o := range orders {
		if c, _ := bboltCycle(gated, true, o); c != nil {
			t.Errorf("order %v: held-back cycle reported: %v", o, ids(c))
		}
		if c, _ := bboltCycle(graph.Gate{}, true, o); len(c) != 3 {
			t.Errorf("order %v, no writers' gate: cycle = %v", o, ids(c))
		}
		if c, _ := bboltCycle(gated, false, o); len(c) != 3 {
			t.Errorf("order %v, rw->meta from a read hold: cycle = %v", o, ids(c))
		}
		if c, _ := bboltCycle(gateOf(7), true, o); len(c) != 3 {
			t.Errorf("order %v, writers of mmap hold a lock no edge holds: cycle = %v", o, ids(c))
		}
	}
	// The gate opens (a write of mmap without rw): Recheck reports.
	_, g := bboltCycle(gated, true, orders[0])
	g.SetWritersGate(mmap, graph.Gate{})
	if c := g.Recheck(g.Edge(meta, mmap, true), nil); len(c) != 3 {
		t.Fatalf("after the gate opened, Recheck = %v", ids(c))
	}
	// It narrows to a lock of it no edge holds: the same.
	_, g = bboltCycle(gateOf(rw, 7), true, orders[0])
	if c := g.Recheck(g.Edge(meta, mmap, true), nil); c != nil {
		t.Fatalf("gate {rw, 7}: %v", ids(c))
	}
	g.SetWritersGate(mmap, gateOf(7))
	if c := g.Recheck(g.Edge(meta, mmap, true), nil); len(c) != 3 {
		t.Fatalf("after the gate narrowed to {7}, Recheck = %v", ids(c))
	}
	// rw->meta seen once more from another lock of its class: Src is
	// lost, and the cycle is reported by the merge.
	_, g = bboltCycle(gated, true, orders[0])
	if _, _, c := g.Add(rw, meta, fromLock(obs(), 77), nil); len(c) != 3 {
		t.Fatalf("rw->meta from another lock: cycle = %v", ids(c))
	}
	// The edge out of mmap taken from a write hold: the reader may wait
	// for that holder, and nothing is held back.
	_, g = bboltCycle(gated, true, orders[0])
	if _, _, c := g.Add(mmap, rw, obs(), nil); len(c) != 3 {
		t.Fatalf("mmap->rw from a write hold: cycle = %v", ids(c))
	}
}

// TestHeldBackNotByAWriterOfY: an edge that may write Y does not count
// its hold of G: its goroutine may be the queued writer itself. Y stands
// in the graph twice here, as a class's node y1 and an instance's node
// y2 (one lock can be both), each with the writers' gate {G}.
func TestHeldBackNotByAWriterOfY(t *testing.T) {
	const x, y1, z, y2, G = 1, 2, 3, 4, 9
	for _, write := range []bool{true, false} {
		var g graph.Graph
		for _, y := range []graph.NodeID{y1, y2} {
			g.Node(y, "")
			g.SetWritersGate(y, gateOf(G))
		}
		g.Add(y1, z, fromRead(obs()), nil)
		zy := obs(G)
		if !write {
			zy = toRead(zy)
		}
		g.Add(z, y2, zy, nil)
		g.Add(y2, x, obs(), nil)
		_, _, c := g.Add(x, y1, toRead(obs()), nil)
		if write != (len(c) == 4) {
			t.Errorf("z->y2 under G, for writing %v: cycle = %v", write, ids(c))
		}
	}
}

// TestHeldBackOnlyByTheReader: the reader of Y itself holds G, a lock of
// Y's writers' gate, and nothing else in the cycle does: a queued writer
// of Y would hold G too, and G's holder is the reader, blocked in its
// read acquisition: no writer can queue, and the reader does not block.
func TestHeldBackOnlyByTheReader(t *testing.T) {
	const x, y, gate = 1, 2, 9
	var g graph.Graph
	g.Node(y, "")
	g.SetWritersGate(y, gateOf(gate))
	g.Add(y, x, fromRead(obs()), nil)
	if _, _, c := g.Add(x, y, toRead(obs(gate)), nil); c != nil {
		t.Fatalf("reader holding the writers' gate: %v", ids(c))
	}
	if _, _, c := g.Add(x, y, toRead(obs()), nil); len(c) != 2 {
		t.Fatalf("reader seen without the gate: cycle = %v", ids(c))
	}
}

// TestHeldBackFirstCycleOnly: the shortest cycle through the closing
// edge is held back, a longer one through other nodes is not: the longer
// one is reported.
func TestHeldBackFirstCycleOnly(t *testing.T) {
	const mmap, rw, meta, a, b = 1, 2, 3, 4, 5
	var g graph.Graph
	g.Node(mmap, "")
	g.SetWritersGate(mmap, gateOf(rw))
	g.Add(mmap, rw, fromRead(obs()), nil)
	g.Add(rw, meta, fromLock(obs(), rw), nil)
	g.Add(mmap, a, fromRead(obs()), nil)
	g.Add(a, b, fromLock(obs(), a), nil)
	g.Add(b, meta, fromLock(obs(), b), nil)
	_, _, c := g.Add(meta, mmap, toRead(obs()), nil)
	if got := ids(c); !slices.Equal(got, []graph.NodeID{meta, mmap, a, b}) {
		t.Fatalf("cycle = %v, want the one through a and b", got)
	}
	// With a->b taken under rw too, every cycle is held back.
	g.Remove(a)
	g.Add(mmap, a, fromRead(obs()), nil)
	g.Add(a, b, fromLock(obs(rw), a), nil)
	if c := g.Recheck(g.Edge(meta, mmap, true), nil); c != nil {
		t.Fatalf("every cycle held back, Recheck = %v", ids(c))
	}
}

// TestHeldBackBudget: the search with the rule's sets runs out of budget
// before it rules every cycle out: the cycle the first search found is
// reported, a report maybe false rather than a cycle missed.
func TestHeldBackBudget(t *testing.T) {
	const mmap, rw, meta = 1, 2, 3
	build := func(max int) *graph.Graph {
		g := &graph.Graph{MaxSearch: max}
		for d := graph.NodeID(10); d < 20; d++ {
			g.Node(d, "") // ranked first, within the search's bound
		}
		g.Node(mmap, "")
		g.SetWritersGate(mmap, gateOf(rw))
		g.Add(mmap, rw, fromRead(obs()), nil)
		g.Add(rw, meta, fromLock(obs(), rw), nil)
		// Ways from rw back to meta, taken from no lock known, held back
		// too (rw around the last edge): the first search does not look
		// at them (it finds the cycle first), the second must, one state
		// each.
		for d := graph.NodeID(10); d < 20; d++ {
			g.Add(rw, d, obs(), nil)
			g.Add(d, meta, obs(rw), nil)
		}
		return g
	}
	if _, _, c := build(0).Add(meta, mmap, toRead(obs()), nil); c != nil {
		t.Fatalf("default budget: %v", ids(c))
	}
	if _, _, c := build(4).Add(meta, mmap, toRead(obs()), nil); len(c) != 3 {
		t.Fatalf("budget 4: cycle = %v, want the one found first", ids(c))
	}
}

// TestHeldBackAgainstBruteForce compares, on small random graphs, the
// cycle Recheck finds through each edge with every closed walk through it
// up to a length: Recheck finds one whenever a walk can deadlock, and
// what it finds can deadlock, by the rules written out again here.
func TestHeldBackAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const nodes, maxLen = 5, 7
	subset := func(not ...graph.NodeID) graph.Gate { return randomGate(rng, not...) }
	var heldBack, longer int
	for range 4000 {
		var g graph.Graph
		writers := map[graph.NodeID]graph.Gate{}
		written := map[graph.NodeID]bool{}
		for id := graph.NodeID(1); id <= nodes; id++ {
			g.Node(id, "")
			if rng.IntN(2) == 0 {
				writers[id] = subset(id)
				g.SetWritersGate(id, writers[id])
			}
			written[id] = rng.IntN(4) > 0
		}
		canBlock := func(e *graph.Edge) bool { return e.ToWrite || written[e.To] }
		for range 4 + rng.IntN(6) {
			from, to := graph.NodeID(1+rng.IntN(nodes)), graph.NodeID(1+rng.IntN(nodes))
			for range 1 + rng.IntN(2) {
				o := graph.Observation{Gate: subset(from, to), FromRead: rng.IntN(3) == 0, ToRead: rng.IntN(2) == 0}
				if rng.IntN(3) == 0 {
					o.RGate = subset(from, to)
				}
				switch rng.IntN(4) {
				case 0, 1:
					o.FromLock = from
				case 2:
					o.FromLock = 12
				}
				g.Add(from, to, o, canBlock)
			}
		}
		w := walker{out: map[graph.NodeID][]*graph.Edge{}, writers: writers, canBlock: canBlock}
		var all []*graph.Edge
		g.Each(func(e *graph.Edge) { all = append(all, e) })
		slices.SortFunc(all, func(a, b *graph.Edge) int {
			return cmp.Or(int(a.From*8+a.To)-int(b.From*8+b.To), cmp.Compare(btoi(a.ToWrite), btoi(b.ToWrite)))
		})
		for _, e := range all {
			w.out[e.From] = append(w.out[e.From], e)
		}
		for _, e := range all {
			got := g.Recheck(e, canBlock)
			oldFirst, found := w.shortest(e, maxLen)
			switch {
			case got != nil && !w.deadlocks(got, true):
				t.Fatalf("Recheck(%d->%d) = %v, which cannot deadlock", e.From, e.To, ids(got))
			case got != nil && got[0] != e:
				t.Fatalf("Recheck(%d->%d) = %v, not through it first", e.From, e.To, ids(got))
			case got == nil && found != nil:
				t.Fatalf("Recheck(%d->%d) found nothing; %v can deadlock", e.From, e.To, ids(found))
			}
			if oldFirst != nil && w.heldBack(oldFirst) {
				if found == nil {
					heldBack++
				} else {
					longer++
				}
			}
		}
	}
	t.Logf("held back: %d; held back, a longer walk not: %d", heldBack, longer)
	if heldBack == 0 || longer == 0 {
		t.Fatalf("the cases do not exercise the rule: held back %d, longer %d", heldBack, longer)
	}
}

// walker enumerates closed walks, and tells which can deadlock.
type walker struct {
	out      map[graph.NodeID][]*graph.Edge
	writers  map[graph.NodeID]graph.Gate
	canBlock func(*graph.Edge) bool
}

// shortest returns, among the walks e, then e.To ->* e.From not through
// e.From before its end, of up to max edges, the shortest whose gate is
// empty (the gate rule alone), and the shortest that can deadlock (the
// ∃ rule too).
func (w *walker) shortest(e *graph.Edge, max int) (gated, deadlocks graph.Cycle) {
	for n := 1; n <= max && deadlocks == nil; n++ {
		w.walks(graph.Cycle{e}, n, func(c graph.Cycle) {
			if gated == nil && w.deadlocks(c, false) {
				gated = slices.Clone(c)
			}
			if deadlocks == nil && w.deadlocks(c, true) {
				deadlocks = slices.Clone(c)
			}
		})
	}
	return gated, deadlocks
}

// walks calls f with every closed walk of n edges that goes on from c.
func (w *walker) walks(c graph.Cycle, n int, f func(graph.Cycle)) {
	at := c[len(c)-1].To
	if at == c[0].From {
		if len(c) == n {
			f(c)
		}
		return
	}
	if len(c) == n {
		return
	}
	for _, e := range w.out[at] {
		w.walks(append(c, e), n, f)
	}
}

// deadlocks reports whether closed walk c can deadlock: every edge can
// block, no lock is in every edge's gate (a read-only edge's counted
// with its To's writers' gate when the next edge is from read holds),
// and, with exists, heldBack does not hold it back.
func (w *walker) deadlocks(c graph.Cycle, exists bool) bool {
	for i, e := range c {
		if e.To != c[(i+1)%len(c)].From || !w.canBlock(e) {
			return false
		}
	}
	for _, l := range walkLocks {
		common := true
		for i, e := range c {
			if !e.Gate.Has(l) && !(w.readCounted(c, i) && w.writers[e.To].Has(l)) {
				common = false
				break
			}
		}
		if common {
			return false
		}
	}
	return !exists || !w.heldBack(c)
}

// readCounted reports whether c[i] is a read-only edge whose next edge
// is from read holds only.
func (w *walker) readCounted(c graph.Cycle, i int) bool {
	return !c[i].ToWrite && !c[(i+1)%len(c)].FromWrite
}

// heldBack is the pair rule, two edges of c holding one lock (in their
// gates, or as their Src), and the ∃ rule, pair by pair: a read edge into
// Y counted with Y's writers' gate, a lock G of it, and an edge that holds
// G and does not write a node whose writers' gate holds G.
//
// Rule R-RW: one of the two may hold the lock at least for reading (its
// RGate, or its Hold), the other holding it for writing.
func (w *walker) heldBack(c graph.Cycle) bool {
	holds := func(e *graph.Edge, l graph.NodeID) bool { return e.Gate.Has(l) || e.Src == l }
	reads := func(e *graph.Edge, l graph.NodeID) bool { return e.RGate.Has(l) || e.Hold == l }
	for i, e := range c {
		for _, f := range c[i+1:] {
			for _, l := range walkLocks {
				if holds(e, l) && (holds(f, l) || reads(f, l)) || reads(e, l) && holds(f, l) {
					return true
				}
			}
		}
	}
	for i, r := range c {
		if !w.readCounted(c, i) {
			continue
		}
		for _, l := range w.writers[r.To].IDs() {
			for _, e := range c {
				if (e.Gate.Has(l) || e.Src == l) && !(e.ToWrite && w.writers[e.To].Has(l)) {
					return true
				}
			}
		}
	}
	return false
}

// TestGatedCounts: the graph counts the locks writers' gates hold, so
// that where none does the rule of heldBack costs nothing.
func TestGatedCounts(t *testing.T) {
	var g graph.Graph
	g.Node(1, "")
	g.Node(2, "")
	g.SetWritersGate(1, gateOf(9))
	g.SetWritersGate(2, gateOf(8, 9))
	if n := g.Gated(); n != 2 {
		t.Fatalf("gated = %d, want 2", n)
	}
	g.SetWritersGate(1, graph.Gate{})
	if n := g.Gated(); n != 2 {
		t.Fatalf("after 1's gate emptied: gated = %d, want 2", n)
	}
	g.SetWritersGate(2, gateOf(8, 9).Without(8))
	if n := g.Gated(); n != 1 {
		t.Fatalf("after 2's gate narrowed: gated = %d, want 1", n)
	}
	g.Remove(2)
	if n := g.Gated(); n != 0 {
		t.Fatalf("after 2 was removed: gated = %d, want 0", n)
	}
	g.SetWritersGate(1, gateOf(9))
	g.Reset()
	if n := g.Gated(); n != 0 {
		t.Fatalf("after Reset: gated = %d, want 0", n)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// walkLocks are the locks of the brute-force tests' gates: nodes (1-5)
// and locks that are no node (11, 12).
var walkLocks = []graph.NodeID{1, 2, 3, 4, 5, 11, 12}

// randomGate returns a random subset of walkLocks, less not.
func randomGate(rng *rand.Rand, not ...graph.NodeID) graph.Gate {
	var ids []graph.NodeID
	for _, l := range walkLocks {
		if !slices.Contains(not, l) && rng.IntN(3) == 0 {
			ids = append(ids, l)
		}
	}
	return graph.NewGate(ids)
}
