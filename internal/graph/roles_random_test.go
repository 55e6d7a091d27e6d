package graph_test

import (
	"math/rand"
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// Random runs of pairs over few classes: whenever the pairs close a
// cycle of locks that is not within one class, some cycle must have been
// reported by the time the run ends (R26 holds back only where the
// pairs close no cycle of locks).
func TestRandomPairsNeverHideACycleOfLocks(t *testing.T) {
	for seed := int64(0); seed < 20000; seed++ {
		r := rand.New(rand.NewSource(seed))
		nc := 2 + r.Intn(3)
		nl := 3 + r.Intn(6)
		cls := make([]graph.NodeID, nl)
		for i := range cls {
			cls[i] = graph.NodeID(1 + r.Intn(nc))
		}
		var g graph.Graph
		g.EnableRoles()
		out := map[int][]int{}
		reported := false
		var log [][2]int
		for op := 0; op < 2+r.Intn(30); op++ {
			a, b := r.Intn(nl), r.Intn(nl)
			if a == b {
				continue
			}
			log = append(log, [2]int{a, b})
			out[a] = append(out[a], b)
			if c := join(&g, cls[a], cls[b], graph.NodeID(100+a), graph.NodeID(100+b)); c != nil {
				reported = true
			}
		}
		if !reported && mixedLockCycle(out, cls) {
			t.Fatalf("seed %d: classes %v, pairs %v: a cycle of locks across classes, nothing reported", seed, cls, log)
		}
	}
}

// mixedLockCycle reports whether out has a cycle of locks through two
// classes at least.
func mixedLockCycle(out map[int][]int, cls []graph.NodeID) bool {
	n := len(cls)
	// reach[i][j]: a path from i to j.
	reach := make([][]bool, n)
	for i := range reach {
		reach[i] = make([]bool, n)
		for _, j := range out[i] {
			reach[i][j] = true
		}
	}
	for k := 0; k < n; k++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if reach[i][k] && reach[k][j] {
					reach[i][j] = true
				}
			}
		}
	}
	for i := 0; i < n; i++ {
		for _, j := range out[i] {
			if cls[i] != cls[j] && reach[j][i] {
				return true
			}
		}
	}
	return false
}
