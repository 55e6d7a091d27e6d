package graph_test

import (
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// bbolt's held-back 3-cycle, and a layered graph off mmap(read) that leads
// back to meta under rw: every cycle through it is held back by the ∃ rule
// (rw in W(mmap), held by the last edge). Each layer node's lock is the
// Src of its two out-edges, which no cycle can both take: the search
// must not tell paths apart by it (it once ran out of budget at 14
// layers and reported the cycle).
func TestPairRuleLayersBackToMeta(t *testing.T) {
	const mmap, rw, meta = 1, 2, 3
	for _, layers := range []int{6, 10, 14, 20} {
		g := new(graph.Graph)
		node := func(layer, j int) graph.NodeID { return graph.NodeID(1000 + 2*layer + j) }
		g.Node(mmap, "")
		g.SetWritersGate(mmap, gateOf(rw))
		g.Add(mmap, rw, fromRead(obs()), nil)
		g.Add(rw, meta, fromLock(obs(), rw), nil)
		for j := 0; j < 2; j++ {
			g.Add(mmap, node(0, j), fromRead(obs()), nil)
		}
		for l := 0; l+1 < layers; l++ {
			for i := 0; i < 2; i++ {
				for j := 0; j < 2; j++ {
					g.Add(node(l, i), node(l+1, j), fromLock(obs(), node(l, i)), nil)
				}
			}
		}
		for i := 0; i < 2; i++ {
			g.Add(node(layers-1, i), meta, fromLock(obs(rw), node(layers-1, i)), nil)
		}
		start := time.Now()
		_, _, c := g.Add(meta, mmap, toRead(obs()), nil)
		e := g.Edge(meta, mmap, true)
		_, visited := g.SearchCounted(e, nil)
		t.Logf("layers %d: reported %v, states %d, %v", layers, ids(c), visited, time.Since(start))
		if c != nil || visited > 4096 {
			t.Errorf("layers %d: held-back cycle reported: %v (%d states)", layers, ids(c), visited)
		}
	}
}
