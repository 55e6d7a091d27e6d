package graph_test

import (
	"slices"
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

func TestGateSetOperations(t *testing.T) {
	g := graph.NewGate([]graph.NodeID{5, 1, 3, 5, 9})
	if got := g.IDs(); !slices.Equal(got, []graph.NodeID{1, 3, 5, 9}) || g.Len() != 4 {
		t.Fatalf("NewGate = %v (len %d)", got, g.Len())
	}
	w := g.Without(3)
	if got := w.IDs(); !slices.Equal(got, []graph.NodeID{1, 5, 9}) || w.Len() != 3 || w.Has(3) || !w.Has(9) {
		t.Fatalf("Without(3) = %v", got)
	}
	if !graph.SharesList(g, w) {
		t.Fatal("Without copied the list")
	}
	if got := w.Without(7).IDs(); !slices.Equal(got, []graph.NodeID{1, 5, 9}) {
		t.Fatalf("Without an absent id = %v", got)
	}
	if got := w.Without(1).IDs(); !slices.Equal(got, []graph.NodeID{5, 9}) {
		t.Fatalf("Without twice = %v", got)
	}
	// Equal sets have equal keys, however they are kept.
	if w.Key() != graph.NewGate([]graph.NodeID{9, 5, 1}).Key() {
		t.Fatal("equal gates have different keys")
	}
	if w.Key() == g.Key() {
		t.Fatal("different gates have one key")
	}

	for _, c := range []struct {
		a, b graph.Gate
		want []graph.NodeID
	}{
		{g, graph.NewGate([]graph.NodeID{1, 2, 3, 4, 5, 9, 10}), []graph.NodeID{1, 3, 5, 9}},
		{g, graph.NewGate([]graph.NodeID{3, 9}), []graph.NodeID{3, 9}},
		{g, graph.Gate{}, nil},
		{graph.Gate{}, g, nil},
		{g, w, []graph.NodeID{1, 5, 9}},
		{w, g, []graph.NodeID{1, 5, 9}},
		{w, g.Without(9), []graph.NodeID{1, 5}},
		{w, g.Without(1).Without(9), []graph.NodeID{5}},
	} {
		if got := c.a.Intersect(c.b).IDs(); !slices.Equal(got, c.want) {
			t.Errorf("%v ∩ %v = %v, want %v", c.a.IDs(), c.b.IDs(), got, c.want)
		}
	}
}

// The edges recorded for one acquisition share their gates' list, and
// merging a second sighting of all of them, under one more lock or one
// fewer, keeps them sharing one list: deep nesting costs a list per
// acquisition, not one per edge.
func TestMergedGatesShareOneList(t *testing.T) {
	const (
		k     = 50
		to    = graph.NodeID(1000)
		gone  = graph.NodeID(8)   // held at the first sighting only
		extra = graph.NodeID(500) // held at the second only
	)
	var g graph.Graph
	sight := func(second bool) {
		var held []graph.NodeID
		for id := graph.NodeID(1); id <= k; id++ {
			if id != gone || !second {
				held = append(held, id)
			}
		}
		w := graph.NewGate(slices.Clone(held))
		if second {
			w = graph.NewGate(append(slices.Clone(held), extra))
		}
		for _, from := range held {
			g.Add(from, to, graph.Observation{Gate: w.Without(from)}, nil)
		}
	}
	sight(false)
	sight(true)
	var first graph.Gate
	for from := graph.NodeID(1); from <= k; from++ {
		e := g.Edge(from, to, false)
		want := k - 2 // the others of the k, less gone...
		if from == gone {
			want = k - 1 // ...except on the edge from gone, seen once
		}
		if e.Gate.Len() != want || e.Gate.Has(from) || e.Gate.Has(extra) || (from != gone && e.Gate.Has(gone)) {
			t.Fatalf("gate of %d->%d = %v", from, to, e.Gate.IDs())
		}
		if from == gone {
			continue
		}
		if first.Len() == 0 {
			first = e.Gate
		} else if !graph.SharesList(first, e.Gate) {
			t.Fatalf("gate of %d->%d has a list of its own", from, to)
		}
	}
}
