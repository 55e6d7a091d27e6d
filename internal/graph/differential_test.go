package graph

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The differential test below checks Add, Remove and Recheck against a
// brute-force search over a plain copy of the graph, under random churn
// that keeps the graph cyclic for long stretches, breaks its cycles by
// removals and brings them back (so that the order is often stale:
// ranksValid false, g.cyclic > 0 on an acyclic graph, retopo deferred by
// the quarter rule of Remove). Edges have no gates; canBlock is a fixed
// function of the edge, so that some edges are invisible to searches.
//
// Checked after every step:
//   - a new edge closes a cycle (a path back over blocking edges) iff Add
//     returns one, and the cycle returned is a real one through the edge;
//   - Recheck of a random edge finds a cycle iff one exists through it;
//   - Cyclic() false implies the graph is acyclic;
//   - g.cyclic counts the flagged edges; ranksValid iff g.cyclic == 0;
//   - ranks are distinct; every unflagged edge agrees with the ranks (so
//     every cycle holds a flagged edge), every edge does when ranksValid.

type brute map[NodeID]map[NodeID]bool

func (b brute) add(from, to NodeID) {
	if b[from] == nil {
		b[from] = map[NodeID]bool{}
	}
	b[from][to] = true
	if b[to] == nil {
		b[to] = map[NodeID]bool{}
	}
}

func (b brute) remove(id NodeID) {
	delete(b, id)
	for _, out := range b {
		delete(out, id)
	}
}

// reaches reports whether a path from -> to exists over edges ok allows.
func (b brute) reaches(from, to NodeID, ok func(f, t NodeID) bool) bool {
	seen := map[NodeID]bool{from: true}
	stack := []NodeID{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for m := range b[n] {
			if !ok(n, m) {
				continue
			}
			if m == to {
				return true
			}
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return false
}

func (b brute) acyclic() bool {
	all := func(NodeID, NodeID) bool { return true }
	for n, out := range b {
		for m := range out {
			if m == n || b.reaches(m, n, all) {
				return false
			}
		}
	}
	return true
}

func blocks(from, to NodeID) bool { return (uint64(from)*31+uint64(to)*17)%11 != 0 }

func canBlockFn(e *Edge) bool { return blocks(e.From, e.To) }

func checkCycle(t *testing.T, g *Graph, b brute, e *Edge, c Cycle) {
	t.Helper()
	if c[0] != e {
		t.Fatalf("cycle does not start with the edge %d->%d", e.From, e.To)
	}
	for i, x := range c {
		if !g.Holds(x) || !b[x.From][x.To] {
			t.Fatalf("cycle edge %d->%d not in the graph", x.From, x.To)
		}
		if !blocks(x.From, x.To) {
			t.Fatalf("cycle edge %d->%d cannot block", x.From, x.To)
		}
		if nx := c[(i+1)%len(c)]; x.To != nx.From {
			t.Fatalf("cycle not contiguous at %d->%d, %d->%d", x.From, x.To, nx.From, nx.To)
		}
	}
}

func checkInvariants(t *testing.T, g *Graph, b brute) {
	t.Helper()
	flagged := 0
	ranks := map[int]NodeID{}
	for id, n := range g.nodes {
		if o, dup := ranks[n.rank]; dup {
			t.Fatalf("nodes %d and %d share rank %d", o, id, n.rank)
		}
		ranks[n.rank] = id
	}
	for _, e := range g.edges {
		if e.cyclic {
			flagged++
		} else if e.from.rank >= e.to.rank {
			t.Fatalf("unflagged edge %d->%d against the order (%d >= %d)", e.From, e.To, e.from.rank, e.to.rank)
		}
		if g.ranksValid && e.from.rank >= e.to.rank {
			t.Fatalf("ranks valid but edge %d->%d against them", e.From, e.To)
		}
	}
	if flagged != g.cyclic {
		t.Fatalf("g.cyclic = %d, %d edges flagged", g.cyclic, flagged)
	}
	if g.ranksValid != (g.cyclic == 0) && len(g.nodes) > 0 {
		t.Fatalf("ranksValid = %v with g.cyclic = %d", g.ranksValid, g.cyclic)
	}
	if !g.Cyclic() && !b.acyclic() {
		t.Fatal("Cyclic() false on a cyclic graph")
	}
	if len(g.nodes) != len(b) || len(g.edges) != func() int {
		k := 0
		for _, out := range b {
			k += len(out)
		}
		return k
	}() {
		t.Fatalf("graph has %d nodes %d edges; model %d nodes", len(g.nodes), len(g.edges), len(b))
	}
}

func TestDifferentialAgainstBruteForce(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, seed*7919))
			var g Graph
			b := brute{}
			// long-lived locks 1..long; short-lived from 1000 up.
			long := NodeID(4 + r.IntN(20))
			next := NodeID(1000)
			var short []NodeID
			steps := 3000
			stats := map[string]int{}
			forward := seed%2 == 0
			pick := func() NodeID {
				if len(short) > 0 && r.IntN(3) == 0 {
					return short[r.IntN(len(short))]
				}
				return NodeID(1 + r.IntN(int(long)))
			}
			for step := 0; step < steps; step++ {
				switch k := r.IntN(100); {
				case k < 55: // an edge between existing or long-lived locks
					from, to := pick(), pick()
					if from == to {
						continue
					}
					if forward && from > to && r.IntN(20) != 0 {
						// mostly one order: the graph is acyclic for
						// long stretches, an inversion now and then.
						from, to = to, from
					}
					_, existed := b[from][to]
					want := !existed && blocks(from, to) && g.nodes[to] != nil &&
						b.reaches(to, from, blocks)
					e, isNew, c := g.Add(from, to, Observation{}, canBlockFn)
					b.add(from, to)
					if isNew == existed {
						t.Fatalf("step %d: Add(%d,%d) isNew=%v, existed=%v", step, from, to, isNew, existed)
					}
					if c != nil {
						checkCycle(t, &g, b, e, c)
						stats["found"]++
					}
					if want && c == nil {
						t.Fatalf("step %d: Add(%d,%d) missed a cycle (cyclic=%d ranksValid=%v unranked=%d nodes=%d)",
							step, from, to, g.cyclic, g.ranksValid, g.unranked, len(g.nodes))
					}
					if !existed && !want && c != nil {
						t.Fatalf("step %d: Add(%d,%d) reported a cycle that brute force does not see", step, from, to)
					}
					if !g.ranksValid {
						stats["stale"]++
						if b.acyclic() {
							stats["acyclic-but-unordered"]++
						}
					}
				case k < 75: // a short-lived lock, taken under or over a long-lived one
					id := next
					next++
					short = append(short, id)
					l := NodeID(1 + r.IntN(int(long)))
					if forward || r.IntN(2) == 0 {
						g.Add(l, id, Observation{}, canBlockFn)
						b.add(l, id)
					} else {
						g.Add(id, l, Observation{}, canBlockFn)
						b.add(id, l)
					}
				case k < 93: // collect a short-lived lock
					if len(short) == 0 {
						continue
					}
					i := r.IntN(len(short))
					id := short[i]
					short = append(short[:i], short[i+1:]...)
					g.Remove(id)
					b.remove(id)
				case k < 96: // collect a long-lived lock (it may come back)
					id := NodeID(1 + r.IntN(int(long)))
					g.Remove(id)
					b.remove(id)
				default: // Recheck a random edge
					var all []*Edge
					for _, e := range g.edges {
						all = append(all, e)
					}
					if len(all) == 0 {
						continue
					}
					e := all[r.IntN(len(all))]
					want := blocks(e.From, e.To) && b.reaches(e.To, e.From, blocks)
					c := g.Recheck(e, canBlockFn)
					if c != nil {
						checkCycle(t, &g, b, e, c)
					}
					if want != (c != nil) {
						t.Fatalf("step %d: Recheck(%d->%d) = %v, brute force %v", step, e.From, e.To, c != nil, want)
					}
				}
				checkInvariants(t, &g, b)
			}
			if testing.Verbose() {
				t.Logf("forward=%v long=%d retopos=%d %v", forward, long, g.retopos, stats)
			}
		})
	}
}
