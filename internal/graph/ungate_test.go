package graph_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// Rule R24: a lock kept until its goroutine exited holds nothing back.
// Ungate takes it out of every gate, and the cycle it held back is found
// by searching again along the edges it changed.
func TestUngateLetsTheHeldBackCycleBeFound(t *testing.T) {
	var g graph.Graph
	const G, H = 99, 98
	g.Add(1, 2, obs(G, H), nil)
	if _, _, c := g.Add(2, 1, obs(G), nil); c != nil {
		t.Fatalf("gated cycle reported: %v", ids(c))
	}
	g.Add(3, 4, obs(H), nil) // an edge G never gated
	changed := g.Ungate(G)
	if len(changed) != 2 {
		t.Fatalf("Ungate changed %d edges, want the 2 G gated", len(changed))
	}
	for _, e := range changed {
		if e.Gate.Has(G) {
			t.Fatalf("edge %d->%d keeps G in its gate", e.From, e.To)
		}
	}
	if !changed[0].Gate.Has(H) && !changed[1].Gate.Has(H) {
		t.Fatal("Ungate took H out too")
	}
	if c := g.Recheck(changed[0], nil); c == nil {
		t.Fatal("the cycle G held back is not found once G is ungated")
	}
	if again := g.Ungate(G); len(again) != 0 {
		t.Fatalf("a second Ungate changed %d edges", len(again))
	}
}

// Regate puts the lock back into the gate Ungate left, unless the edge was
// seen since (a sighting without the lock cannot narrow a gate that
// lost it already) or left the graph.
func TestRegatePutsTheLockBackIntoEdgesNotSeenSince(t *testing.T) {
	var g graph.Graph
	const G, H = 99, 98
	g.Add(1, 2, obs(G, H), nil)
	g.Add(3, 4, obs(G, H), nil)
	changed := g.Ungate(G)
	if len(changed) != 2 {
		t.Fatalf("Ungate changed %d edges, want 2", len(changed))
	}
	seen := map[*graph.Edge]uint32{}
	for _, e := range changed {
		seen[e] = e.Sightings
	}
	g.Add(3, 4, obs(), nil) // seen since, without G: its gate stays as it is
	for _, e := range changed {
		put := g.Regate(e, seen[e], G)
		switch e.From {
		case 1:
			if !put || !e.Gate.Has(G) || !e.Gate.Has(H) {
				t.Fatalf("1->2 not put back: %v %v", put, e.Gate.IDs())
			}
		case 3:
			if put || e.Gate.Len() != 0 {
				t.Fatalf("3->4, seen since, was put back: %v", e.Gate.IDs())
			}
		}
	}
	g.Remove(2)
	for _, e := range changed {
		if e.From == 1 && g.Regate(e, e.Sightings, G) {
			t.Fatal("an edge that left the graph was put back")
		}
	}
}
