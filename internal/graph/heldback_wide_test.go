package graph_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// The held-back bbolt 3-cycle mmap(read)->rw->meta->mmap(read); then a
// wide star of n nodes off mmap (no gates, leading nowhere); then a
// second held-back cycle mmap(read)->rw->meta2->mmap(read). Nothing can
// deadlock. The first search finds a 3-cycle in a few states, so the
// second search's budget is 4096, and it must visit every star node.
func TestHeldBackInAWideGraph(t *testing.T) {
	const mmap, rw, meta, meta2 = 1, 2, 3, 4
	for _, n := range []int{1000, 5000} {
		g := new(graph.Graph)
		g.Node(mmap, "")
		g.SetWritersGate(mmap, gateOf(rw))
		g.Add(mmap, rw, fromRead(obs()), nil)
		g.Add(rw, meta, fromLock(obs(), rw), nil)
		if _, _, c := g.Add(meta, mmap, toRead(obs()), nil); c != nil {
			t.Fatalf("first cycle reported: %v", ids(c))
		}
		for i := 0; i < n; i++ {
			g.Add(mmap, graph.NodeID(10000+i), fromRead(obs()), nil)
		}
		g.Add(rw, meta2, fromLock(obs(), rw), nil)
		if _, _, c := g.Add(meta2, mmap, toRead(obs()), nil); c != nil {
			t.Errorf("star of %d: held-back cycle reported by Add: %v", n, ids(c))
		}
		if c := g.Recheck(g.Edge(meta, mmap, true), nil); c != nil {
			t.Errorf("star of %d: held-back cycle reported by Recheck: %v", n, ids(c))
		}
	}
}
