package graph_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// R26: classes in fixed roles. Nodes under 100 are classes here; locks
// are ids from 100 on.
const classG, classC = 1, 2

// join sights the locks from and to joined between classes f and t, as
// the owner does at each acquisition, adds the edge f -> t, and returns
// the cycle it closes or one the sighting makes searched again.
func join(g *graph.Graph, f, t, from, to graph.NodeID) graph.Cycle {
	g.EnableRoles()
	again := g.Sight(f, t, [2]graph.NodeID{from, to}, true)
	if f == t {
		return recheck(g, again)
	}
	if _, _, c := g.Add(f, t, graph.Observation{}, nil); c != nil {
		return c
	}
	return recheck(g, again)
}

// recheck searches again through es and returns the first cycle found.
func recheck(g *graph.Graph, es []*graph.Edge) graph.Cycle {
	for _, e := range es {
		if c := g.Recheck(e, nil); c != nil {
			return c
		}
	}
	return nil
}

// A tree whose levels alternate two types, each node locking its own
// lock, then its parent's: g1 under c0, c2 under g1. The classes make a
// cycle G -> C -> G; the locks never do, and g1 meets both edges. Held
// back, until a pair closes a cycle of locks: c0 -> g1, the inverse of
// g1 -> c0.
func TestFixedRolesHoldBackAClassCycleUntilItsLocksCloseOne(t *testing.T) {
	const g1, c0, c2 = 101, 100, 102
	var g graph.Graph
	join(&g, classG, classC, g1, c0)
	if c := join(&g, classC, classG, c2, g1); c != nil {
		t.Fatalf("a tree of two types: got %v, want it held back", ids(c))
	}
	if g.RolesHeld != 1 {
		t.Fatalf("RolesHeld = %d, want 1", g.RolesHeld)
	}
	if c := join(&g, classC, classG, c2, g1); c != nil {
		t.Fatalf("a pair seen again: got %v", ids(c))
	}
	if c := join(&g, classC, classG, c0, g1); len(c) != 2 {
		t.Fatalf("a cycle of locks: got %v, want the 2-cycle", ids(c))
	}
}

// The lockdep prediction stays where no lock meets two edges: one store
// (locks 100, 101) takes its mu then its idx, another (110, 111) its idx
// then its mu.
func TestNoMeetingKeepsTheClassCyclePrediction(t *testing.T) {
	const mu, idx = 1, 2
	var g graph.Graph
	join(&g, mu, idx, 100, 101)
	if c := join(&g, idx, mu, 111, 110); len(c) != 2 {
		t.Fatalf("two stores, each one way: got %v, want the 2-cycle", ids(c))
	}
}

// An edge with no pairs sighted (an owner that tells none), or whose
// pairs are not all known, holds nothing back.
func TestUnknownPairsHoldNothingBack(t *testing.T) {
	var g graph.Graph
	g.Add(classG, classC, graph.Observation{}, nil)
	if c := join(&g, classC, classG, 102, 101); len(c) != 2 {
		t.Fatalf("no pairs sighted on G -> C: got %v, want the 2-cycle", ids(c))
	}
	var h graph.Graph
	join(&h, classG, classC, 101, 100)
	h.LosePairs(classG, classC)
	if c := join(&h, classC, classG, 102, 101); len(c) != 2 {
		t.Fatalf("pairs lost on G -> C: got %v, want the 2-cycle", ids(c))
	}
}

// A cycle held back is searched again when its part loses pairs: past
// the bound of pairs a set keeps, by LosePairs, by LoseAllPairs.
func TestLostPairsBringAHeldCycleBack(t *testing.T) {
	var g graph.Graph
	join(&g, classG, classC, 101, 100)
	if c := join(&g, classC, classG, 102, 101); c != nil {
		t.Fatalf("held back expected, got %v", ids(c))
	}
	var found graph.Cycle
	for i := range graph.NodeID(100) {
		if found = join(&g, classG, classC, 1000+i, 102); found != nil {
			break
		}
	}
	if len(found) != 2 {
		t.Fatalf("past the bound of pairs: got %v, want the 2-cycle", ids(found))
	}

	for _, lose := range []func(*graph.Graph) []*graph.Edge{
		func(h *graph.Graph) []*graph.Edge { return h.LosePairs(classG, classC) },
		func(h *graph.Graph) []*graph.Edge { return h.LoseAllPairs() },
	} {
		var h graph.Graph
		join(&h, classG, classC, 101, 100)
		join(&h, classC, classG, 102, 101)
		if c := recheck(&h, lose(&h)); len(c) != 2 {
			t.Fatalf("pairs lost: got %v, want the 2-cycle", ids(c))
		}
	}
}

// A cycle of locks may go round the cycle of classes more than once, or
// through other classes of its part, or between two locks of one class
// (the class's own pairs): each is a cycle of locks, reported.
func TestACycleOfLocksAnywhereInThePartIsReported(t *testing.T) {
	const a, b, c = 1, 2, 3
	// Four philosophers of two alternating kinds: a1 -> b1 -> a2 -> b2 -> a1.
	var ring graph.Graph
	join(&ring, a, b, 101, 201)
	join(&ring, b, a, 201, 102)
	join(&ring, a, b, 102, 202)
	if cy := join(&ring, b, a, 202, 101); len(cy) == 0 {
		t.Fatalf("a ring of two laps: got no cycle")
	}
	// a1 -> b1 -> c1 -> a2 -> b2 -> a1: A > B > C > A > B > A.
	var walk graph.Graph
	join(&walk, a, b, 101, 201)
	join(&walk, b, c, 201, 301)
	join(&walk, c, a, 301, 102)
	join(&walk, a, b, 102, 202)
	if cy := join(&walk, b, a, 202, 101); len(cy) == 0 {
		t.Fatalf("a closed walk through three classes: got no cycle")
	}
	// g -> a1 -> a2 -> g: a1 and a2 are of one class (its own pairs).
	const reg = 10 // the registry's class
	var hop graph.Graph
	join(&hop, reg, a, 100, 101)
	join(&hop, a, a, 101, 102)
	if cy := join(&hop, a, reg, 102, 100); len(cy) != 2 {
		t.Fatalf("a hop between two locks of one class: got %v, want the 2-cycle", ids(cy))
	}
	// The same, the hop sighted last.
	var late graph.Graph
	join(&late, reg, a, 100, 101)
	if cy := join(&late, a, reg, 102, 100); cy != nil {
		t.Fatalf("before the hop: got %v, want it held back", ids(cy))
	}
	if cy := join(&late, a, a, 101, 102); len(cy) != 2 {
		t.Fatalf("the hop sighted last: got %v, want the 2-cycle", ids(cy))
	}
}

// Locks that die take their pairs with them (Forget), and a node
// removed its sets: nothing is kept for them, however many come and go.
// A cycle held back once, whose locks are all gone, stays held back as
// new objects of the same shape come: the roles were seen.
func TestDeadLocksLeaveTheirPairsAndTheRolesStay(t *testing.T) {
	var g graph.Graph
	for i := range graph.NodeID(500) {
		base := 1000 + 10*i
		join(&g, classG, classC, base+1, base)
		if c := join(&g, classC, classG, base+2, base+1); c != nil {
			t.Fatalf("tree %d: got %v, want it held back", i, ids(c))
		}
		for id := base; id < base+3; id++ {
			g.Forget(id)
		}
	}
	if c := join(&g, classC, classG, 90002, 90001); c != nil {
		t.Fatalf("a new tree's first pair: got %v, want it held back", ids(c))
	}
	if n := g.PairsIndexed(); n != 2 {
		t.Fatalf("%d locks indexed, want the new tree's 2", n)
	}

	// A long-lived lock (class 1) taken before short-lived locks, each
	// a class of its own, which die: their nodes go (Remove).
	var h graph.Graph
	for i := range graph.NodeID(10000) {
		z := 1000 + i
		join(&h, 1, z, 100, z)
		h.Forget(z)
		h.Remove(z)
	}
	if n := h.PairsIndexed(); n != 0 {
		t.Fatalf("%d locks indexed after every short-lived lock died", n)
	}
	if n := h.PairSets(); n != 0 {
		t.Fatalf("%d pair sets kept after every short-lived lock's node went", n)
	}
}

// The shortest cycle through an edge, held back, must not hide a longer
// one through it that no lock meets.
func TestAHeldCycleDoesNotHideAnUnmetOne(t *testing.T) {
	const a, b, c = 1, 2, 3
	var g graph.Graph
	// A -> C -> A: a2 -> c1 -> a3, c1 meets.
	join(&g, a, c, 102, 301)
	// A -> B -> C: a1 -> b1, b2 -> c2: no lock meets at B.
	join(&g, a, b, 101, 201)
	join(&g, b, c, 202, 302)
	cy := join(&g, c, a, 301, 103)
	if len(cy) != 3 {
		t.Fatalf("got %v, want the unmet 3-cycle A -> B -> C -> A", ids(cy))
	}
}

// Classes of one lock (zero-value locks) have their edges for pairs,
// sighted by no one: a new pair that closes a cycle of locks through
// them is found all the same. h1 and h3 are of class H; o and u are
// classes of their own (a Once and a Mutex); o's function takes u.
func TestAPairClosingACycleThroughSoloNodesIsReported(t *testing.T) {
	const h, o, u = 1, 2, 3
	const h1, h3 = 101, 103
	var g graph.Graph
	g.EnableRoles()
	g.Node(o, "")
	g.Node(u, "")
	g.SetSolo(o)
	g.SetSolo(u)
	g.Add(o, u, graph.Observation{}, nil)
	join(&g, u, h, u, h3)
	if c := join(&g, h, o, h1, o); c != nil {
		t.Fatalf("h1 -> o -> u -> h3: got %v, want it held back", ids(c))
	}
	if c := recheck(&g, g.Sight(h, o, [2]graph.NodeID{h3, o}, true)); len(c) != 3 {
		t.Fatalf("h3 -> o -> u -> h3: got %v, want the 3-cycle", ids(c))
	}
}

// A class's own pair that closes a cycle of locks searches again through
// every edge of its part R26 held a cycle back through, not one: an edge
// held once may have left the part since (a zero-value lock of the part
// died), or have every cycle through it held back by another rule.
func TestAClassesOwnPairSearchesTheWholePartAgain(t *testing.T) {
	for _, split := range []bool{false, true} {
		const c, d, e, s = 2, 3, 4, 5
		const c1, c2, c3, d1, e1 = 101, 102, 103, 120, 110
		var g graph.Graph
		g.EnableRoles()
		if split {
			join(&g, c, e, c1, e1)
			g.Node(s, "")
			g.SetSolo(s)
			join(&g, e, s, e1, s)
			if cy := join(&g, s, c, s, c2); cy != nil {
				t.Fatalf("C -> E -> S -> C in fixed roles: got %v, want it held back", ids(cy))
			}
			g.Remove(s) // the zero-value lock died
		}
		join(&g, c, d, c2, d1)
		if cy := join(&g, d, c, d1, c3); cy != nil {
			t.Fatalf("C -> D -> C in fixed roles: got %v, want it held back", ids(cy))
		}
		// c3 held, c2 taken: c2 -> d1 -> c3 -> c2 is a cycle of locks.
		if cy := join(&g, c, c, c3, c2); len(cy) != 2 {
			t.Fatalf("split %v: got %v, want the 2-cycle C -> D -> C", split, ids(cy))
		}
	}
}

// A new edge that closes a cycle a lock met (held back) and one no lock
// met (reported) marks the part all the same: a later pair that closes a
// cycle of locks on the held one searches again. X -> Y closes X -> Y ->
// X (x2 meets it) and X -> Y -> Z -> X (none meets); then y4 -> x2, the
// inverse of x2 -> y4.
func TestAnUnmetCycleReportedLeavesTheMetOneWatched(t *testing.T) {
	const z, y, x = 1, 2, 3
	const z1, x2, z7, y4, y5, y6, x8 = 101, 102, 107, 104, 105, 106, 108
	var g graph.Graph
	join(&g, z, x, z7, x8)
	join(&g, y, z, y6, z1)
	join(&g, y, x, y5, x2)
	if c := join(&g, x, y, x2, y4); len(c) != 3 {
		t.Fatalf("got %v, want the unmet 3-cycle", ids(c))
	}
	if c := join(&g, y, x, y4, x2); len(c) == 0 {
		t.Fatalf("y4 -> x2 closes x2 -> y4 -> x2: nothing reported")
	}
}

// Once a part's pairs close a cycle of locks, R26 holds nothing back in
// it: the change searches its marked edges again once, and later cycles
// of locks there search nothing again (each recheck of a large part
// costs a search per marked edge).
func TestAPartWhosePairsCloseACycleOfLocksIsSearchedAgainOnce(t *testing.T) {
	const g1, c0, c2 = 101, 100, 102
	var g graph.Graph
	join(&g, classG, classC, g1, c0)
	if c := join(&g, classC, classG, c2, g1); c != nil {
		t.Fatalf("held back expected, got %v", ids(c))
	}
	again := g.Sight(classC, classG, [2]graph.NodeID{c0, g1}, true)
	if len(again) == 0 {
		t.Fatalf("c0 -> g1 closes a cycle of locks: nothing to search again")
	}
	if c := recheck(&g, again); len(c) != 2 {
		t.Fatalf("got %v, want the 2-cycle", ids(c))
	}
	join(&g, classG, classC, 103, 104)
	if more := g.Sight(classC, classG, [2]graph.NodeID{104, 103}, true); len(more) != 0 {
		t.Fatalf("a second cycle of locks in a part that holds nothing back: %d edges to search again", len(more))
	}
}
