package bench_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The graph-scale benchmark is only as good as its DAG and its cycle
// check; these tests keep them honest on a small graph.

func TestNewDAG(t *testing.T) {
	d := newDAG(rand.New(rand.NewPCG(3, 4)), 50, 200)
	require.Len(t, d.edges, 200)
	seen := map[[2]int]bool{}
	for _, e := range d.edges {
		assert.False(t, seen[e], "duplicate edge %v", e)
		seen[e] = true
	}
	// The edges are acyclic: a topological sort consumes every class.
	indeg := map[int]int{}
	out := map[int][]int{}
	for _, e := range d.edges {
		indeg[e[1]]++
		out[e[0]] = append(out[e[0]], e[1])
	}
	var ready []int
	for c := range 50 {
		if indeg[c] == 0 {
			ready = append(ready, c)
		}
	}
	sorted := 0
	for len(ready) > 0 {
		c := ready[0]
		ready = ready[1:]
		sorted++
		for _, n := range out[c] {
			if indeg[n]--; indeg[n] == 0 {
				ready = append(ready, n)
			}
		}
	}
	assert.Equal(t, 50, sorted)
	assert.GreaterOrEqual(t, d.cycle, 2)
	assert.False(t, seen[[2]int{d.close[0], d.close[1]}], "the closing edge is new")
}

func TestCheckCycle(t *testing.T) {
	// c0 -> c1 -> c2, closed by c2 -> c0.
	d := dag{edges: [][2]int{{0, 1}, {1, 2}}, close: [2]int{2, 0}, cycle: 3,
		taken: map[[2]string]bool{{"c0", "c1"}: true, {"c1", "c2"}: true, {"c2", "c0"}: true}}
	edge := func(from, to string) lockorder.Edge { return lockorder.Edge{From: from, To: to} }
	cycle := func(es ...lockorder.Edge) lockorder.Violation { return lockorder.Violation{Cycle: es} }

	assert.Empty(t, checkCycle(cycle(edge("c2", "c0"), edge("c0", "c1"), edge("c1", "c2")), d))
	assert.Contains(t, checkCycle(cycle(edge("c2", "c0"), edge("c0", "c1")), d), "cycle of 2 edges, want 3")
	assert.Contains(t, checkCycle(cycle(edge("c2", "c0"), edge("c1", "c2"), edge("c0", "c1")), d), "ends at")
	assert.Contains(t, checkCycle(cycle(edge("c2", "c0"), edge("c0", "c3"), edge("c3", "c2")), d), "never taken")
	d.taken[[2]string{"c0", "c2"}] = true
	d.taken[[2]string{"c2", "c1"}] = true
	d.taken[[2]string{"c1", "c0"}] = true
	assert.Contains(t, checkCycle(cycle(edge("c0", "c2"), edge("c2", "c1"), edge("c1", "c0")), d), "closing edge is missing")
}
