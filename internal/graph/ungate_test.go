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
