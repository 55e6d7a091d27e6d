package graph_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// A cycle 1 <-> 2 makes the graph cyclic; 10 -> 11 (out of a lock with no
// edge in) and 11 -> 12 (into one with no edge out) are then not
// searched, and 12 -> 10 closes a second cycle. Removing 1 leaves that
// cycle; removing 11 breaks it: the graph is acyclic again and keeps its
// order, so an edge that agrees with it costs no search.
func TestOrderComesBackWhenAnEdgeNotSearchedBreaksTheLastCycle(t *testing.T) {
	var g graph.Graph
	g.Add(1, 2, obs(), nil)
	if _, _, c := g.Add(2, 1, obs(), nil); c == nil {
		t.Fatal("1 <-> 2 missed")
	}
	g.Add(10, 11, obs(), nil)
	g.Add(11, 12, obs(), nil)
	if _, _, c := g.Add(12, 10, obs(), nil); c == nil {
		t.Fatal("10 -> 11 -> 12 -> 10 missed")
	}
	g.Remove(1)
	g.Remove(11)
	if g.Cyclic() {
		t.Errorf("the graph is acyclic, but still in its cyclic mode")
	}
	for i := graph.NodeID(20); i < 24; i++ {
		g.Add(i, i+1, obs(), nil)
	}
	looked := 0
	count := func(*graph.Edge) bool { looked++; return true }
	g.Add(21, 23, obs(), count) // agrees with any order kept
	if looked != 0 {
		t.Errorf("an edge that agrees with the order was searched (%d edges looked at)", looked)
	}
}
