package graph_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// R26: classes in fixed roles. Nodes 1 and 2 are classes here; locks
// are ids from 100 on.
const classG, classC = 1, 2

// joined is a sighting of an edge that joined locks from and to.
func joined(from, to graph.NodeID) graph.Observation {
	return graph.Observation{Inst: [2]graph.NodeID{from, to}}
}

// A tree whose levels alternate two types, each node locking its own
// lock, then its parent's: g1 under c0, c2 under g1. The classes make a
// cycle G -> C -> G; the locks never do, and g1 meets both edges. Held
// back, until one pair closes a cycle of locks: c0 taken under its own
// child g1's parent's... here c0 -> g1, the inverse of g1 -> c0.
func TestFixedRolesHoldBackAClassCycleUntilItsLocksCloseOne(t *testing.T) {
	const g1, c0, c2 = 101, 100, 102
	var g graph.Graph
	g.Add(classG, classC, joined(g1, c0), nil)
	if _, _, c := g.Add(classC, classG, joined(c2, g1), nil); c != nil {
		t.Fatalf("a tree of two types: got %v, want it held back", ids(c))
	}
	if g.RolesHeld != 1 {
		t.Fatalf("RolesHeld = %d, want 1", g.RolesHeld)
	}
	// A pair seen again changes nothing.
	if _, _, c := g.Add(classC, classG, joined(c2, g1), nil); c != nil {
		t.Fatalf("a pair seen again: got %v", ids(c))
	}
	// c0 -> g1: g1 and c0 are taken in both orders.
	if _, _, c := g.Add(classC, classG, joined(c0, g1), nil); len(c) != 2 {
		t.Fatalf("a cycle of locks: got %v, want the 2-cycle", ids(c))
	}
}

// The lockdep prediction stays where no lock meets two edges: one store
// (locks 100, 101) takes its mu then its idx, another (110, 111) its idx
// then its mu. No run showed one store both ways, but nothing in it says
// the two orders are bound to different objects.
func TestNoMeetingKeepsTheClassCyclePrediction(t *testing.T) {
	const mu, idx = 1, 2
	var g graph.Graph
	g.Add(mu, idx, joined(100, 101), nil)
	if _, _, c := g.Add(idx, mu, joined(111, 110), nil); len(c) != 2 {
		t.Fatalf("two stores, each one way: got %v, want the 2-cycle", ids(c))
	}
}

// An edge whose pairs are not all known (a sighting with no pair: the
// owner's cache may have hidden others) holds nothing back.
func TestAnUnknownPairHoldsNothingBack(t *testing.T) {
	var g graph.Graph
	g.Add(classG, classC, joined(101, 100), nil)
	g.Add(classG, classC, graph.Observation{}, nil)
	if _, _, c := g.Add(classC, classG, joined(102, 101), nil); len(c) != 2 {
		t.Fatalf("pairs unknown: got %v, want the 2-cycle", ids(c))
	}
}

// A cycle held back is searched again when an edge of it loses its
// pairs: past the bound of pairs an edge keeps, or by LosePairs.
func TestLostPairsBringAHeldCycleBack(t *testing.T) {
	var g graph.Graph
	g.Add(classG, classC, joined(101, 100), nil)
	if _, _, c := g.Add(classC, classG, joined(102, 101), nil); c != nil {
		t.Fatalf("held back expected, got %v", ids(c))
	}
	var found graph.Cycle
	for i := range graph.NodeID(100) {
		// Children of c2, each locking it after its own.
		if _, _, c := g.Add(classG, classC, joined(1000+i, 102), nil); c != nil {
			found = c
			break
		}
	}
	if len(found) != 2 {
		t.Fatalf("past the bound of pairs: got %v, want the 2-cycle", ids(found))
	}

	var h graph.Graph
	h.Add(classG, classC, joined(101, 100), nil)
	h.Add(classC, classG, joined(102, 101), nil)
	again := h.LosePairs(classG, classC)
	if len(again) != 1 {
		t.Fatalf("LosePairs returned %d edges, want the held cycle's", len(again))
	}
	if c := h.Recheck(again[0], nil); len(c) != 2 {
		t.Fatalf("after LosePairs: got %v, want the 2-cycle", ids(c))
	}
}

// LosePairs before the edge exists holds for it once it does; past its
// bound of node pairs, and after LoseAllPairs, nothing is held back.
func TestPairsLostBeforeTheEdgeAndForGood(t *testing.T) {
	var g graph.Graph
	g.LosePairs(classC, classG)
	g.Add(classG, classC, joined(101, 100), nil)
	if _, _, c := g.Add(classC, classG, joined(102, 101), nil); len(c) != 2 {
		t.Fatalf("pairs lost before the edge: got %v, want the 2-cycle", ids(c))
	}

	var h graph.Graph
	h.Add(classG, classC, joined(101, 100), nil)
	h.Add(classC, classG, joined(102, 101), nil)
	var again []*graph.Edge
	for i := range graph.NodeID(5000) {
		again = append(again, h.LosePairs(10000+i, 20000+i)...)
	}
	if len(again) != 2 {
		t.Fatalf("past LosePairs' bound: %d edges to search again, want the held cycle's 2", len(again))
	}
	if c := h.Recheck(again[0], nil); len(c) != 2 {
		t.Fatalf("past LosePairs' bound: got %v, want the 2-cycle", ids(c))
	}
	if _, _, c := h.Add(classC, classG, joined(103, 101), nil); c != nil && len(c) != 2 {
		t.Fatalf("got %v", ids(c))
	}
}

// Locks that die take their pairs with them (Forget): the edge stays
// within its bound however many objects come and go, and a cycle held
// back once, whose locks are all gone, stays held back as new objects
// of the same shape come: the roles were seen.
func TestDeadLocksLeaveTheirPairsAndTheRolesStay(t *testing.T) {
	var g graph.Graph
	tree := func(base graph.NodeID) graph.Cycle {
		g1, c0, c2 := base+1, base, base+2
		g.Add(classG, classC, joined(g1, c0), nil)
		_, _, c := g.Add(classC, classG, joined(c2, g1), nil)
		return c
	}
	for i := range graph.NodeID(500) {
		base := 1000 + 10*i
		if c := tree(base); c != nil {
			t.Fatalf("tree %d: got %v, want it held back", i, ids(c))
		}
		for id := base; id < base+3; id++ {
			g.Forget(id)
		}
	}
	// A new tree's first edge alone: no lock of it meets yet, but the
	// roles were seen.
	if _, _, c := g.Add(classC, classG, joined(90002, 90001), nil); c != nil {
		t.Fatalf("a new tree's first pair: got %v, want it held back", ids(c))
	}
}

// The shortest cycle through an edge, held back, must not hide a longer
// one through it that closes on its locks: a1 -> b, a2 -> b -> c, a2 ->
// c, c -> a1. A -> C -> A is held back (a2 -> c, c -> a1; c meets); A ->
// B -> C -> A is a cycle of locks, a1 -> b -> c -> a1.
func TestAHeldCycleDoesNotHideALongerOne(t *testing.T) {
	const a, b, c = 1, 2, 3
	const a1, a2, bl, cl = 101, 102, 110, 120
	var g graph.Graph
	g.Add(a, b, joined(a1, bl), nil)
	g.Add(a, b, joined(a2, bl), nil)
	g.Add(b, c, joined(bl, cl), nil)
	g.Add(a, c, joined(a2, cl), nil)
	_, _, cy := g.Add(c, a, joined(cl, a1), nil)
	if len(cy) != 3 {
		t.Fatalf("got %v, want the 3-cycle of locks a1, b, c", ids(cy))
	}
}
