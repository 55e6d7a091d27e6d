package graph_test

import (
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// layered(20, true) (exponential under the ∃ rule, budgeted), plus n
// unrelated nodes that only reach meta: they are not where the search
// goes, and must not raise its budget (8x them took seconds).
func TestHeldBackBudgetIgnoresUnrelatedNodes(t *testing.T) {
	const meta = 3
	for _, n := range []int{0, 20000} {
		g, e, _ := layered(20, true)
		for i := 0; i < n; i++ {
			g.Add(graph.NodeID(2000000+i), meta, obs(), nil)
		}
		start := time.Now()
		c, visited := g.SearchCounted(e, nil)
		t.Logf("n=%d: cycle %v, states %d, %v", n, ids(c), visited, time.Since(start))
		if visited > 2*4096+2*n+100 {
			t.Errorf("n=%d: %d states visited", n, visited)
		}
	}
}
