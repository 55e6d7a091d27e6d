package graph_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// Rule R-RW: A -> B under G held for writing and B -> A under G held for
// reading cannot wait at once; once G's read holds turn loose (one was
// handed over), Loosen returns the edge to search again, and the cycle
// is found. Both under read holds, it is found at once.
func TestRWExclusionAndLoosen(t *testing.T) {
	const a, b, gate = 1, 2, 10
	var g graph.Graph
	if _, _, c := g.Add(a, b, graph.Observation{Gate: gateOf(gate)}, nil); c != nil {
		t.Fatalf("one edge closes %v", ids(c))
	}
	e, _, c := g.Add(b, a, graph.Observation{RGate: gateOf(gate)}, nil)
	if c != nil {
		t.Fatalf("held back by R-RW, got %v", ids(c))
	}
	es := g.Loosen(gate)
	if len(es) != 1 || es[0] != e {
		t.Fatalf("Loosen = %v, want the closing edge", es)
	}
	if c := g.Recheck(e, nil); len(c) != 2 {
		t.Fatalf("after Loosen, Recheck = %v, want the 2-cycle", ids(c))
	}

	var h graph.Graph
	h.Add(a, b, graph.Observation{RGate: gateOf(gate)}, nil)
	if _, _, c := h.Add(b, a, graph.Observation{RGate: gateOf(gate)}, nil); len(c) != 2 {
		t.Fatalf("read holds on both sides: got %v, want the 2-cycle", ids(c))
	}
}
