package graph_test

import (
	"slices"
	"testing"

	"github.com/syncwatch/syncwatch/internal/graph"
)

// The cost of the search under the rule of heldBack.

// layered adds bbolt's 3-cycle mmap(read) -> rw -> meta -> mmap(read),
// held back (rw->meta taken holding rw, every writer of mmap holding
// rw), with a layered graph hanging off mmap that leads nowhere: layers
// of two nodes, each node's edges into the next layer each taken under a
// lock of its own, all of them in the writers' gate of a node z. The
// first search finds the 3-cycle at once; the second must rule out the
// paths through the layers, and each path holds other locks of z's gate.
// If zRead, the last layer takes z for reading: z's gate can then count,
// and the locks tell the paths apart. It returns the graph and the
// closing edge meta->mmap(read), with the cycle its Add reported.
func layered(layers int, zRead bool) (*graph.Graph, *graph.Edge, graph.Cycle) {
	const mmap, rw, meta, z = 1, 2, 3, 900000
	g := new(graph.Graph)
	node := func(layer, j int) graph.NodeID { return graph.NodeID(1000 + 2*layer + j) }
	for l := 0; l < layers; l++ {
		g.Node(node(l, 0), "")
		g.Node(node(l, 1), "")
	}
	g.Node(mmap, "")
	g.SetWritersGate(mmap, gateOf(rw))
	g.Node(z, "")
	var zs []graph.NodeID
	for i := 0; i < 2*layers; i++ {
		zs = append(zs, graph.NodeID(500000+i))
	}
	g.SetWritersGate(z, graph.NewGate(slices.Clone(zs)))
	g.Add(mmap, rw, fromRead(obs()), nil)
	g.Add(rw, meta, fromLock(obs(), rw), nil)
	for j := 0; j < 2; j++ {
		g.Add(mmap, node(0, j), fromRead(obs(zs[j])), nil)
	}
	for l := 0; l+1 < layers; l++ {
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				g.Add(node(l, i), node(l+1, j), fromLock(obs(zs[2*(l+1)+j]), node(l, i)), nil)
			}
		}
	}
	if zRead {
		g.Add(node(layers-1, 0), z, toRead(fromLock(obs(), node(layers-1, 0))), nil)
		// Back to meta, under rw: the paths through the layers close
		// cycles too, held back by rw, each holding locks of its own.
		g.Add(z, meta, fromRead(obs(rw)), nil)
	}
	e, _, c := g.Add(meta, mmap, toRead(obs()), nil)
	return g, e, c
}

// TestHeldBackSearchKeepsOnlyLocksThatCanCount: the locks of z's gate
// are held along the layers, but z is out of the search's reach, so no
// path's wg can take them in: the search keeps none, visits each node
// of the layers a few times, and holds the 3-cycle back.
func TestHeldBackSearchKeepsOnlyLocksThatCanCount(t *testing.T) {
	g, e, c := layered(20, false)
	if c != nil {
		t.Fatalf("held-back cycle reported: %v", ids(c))
	}
	c, visited := g.SearchCounted(e, nil)
	if c != nil || visited > 1000 {
		t.Fatalf("search: cycle %v, %d states visited", ids(c), visited)
	}
}

// TestHeldBackSearchBounded: z in reach, taken for reading, the locks of
// its gate count and every path through the layers holds others: the
// states double at each layer. Within the budget (8 layers), the search
// rules them all out; past it (20 layers: a million paths, which took
// the unbounded search seconds), it stops after a bounded number of
// states and reports the cycle found first.
func TestHeldBackSearchBounded(t *testing.T) {
	const mmap, rw, meta = 1, 2, 3
	g, e, c := layered(8, true)
	if c != nil {
		t.Fatalf("8 layers: held-back cycle reported: %v", ids(c))
	}
	if c, visited := g.SearchCounted(e, nil); c != nil {
		t.Fatalf("8 layers: search: cycle %v, %d states visited", ids(c), visited)
	}
	g, e, c = layered(20, true)
	if got := ids(c); !slices.Equal(got, []graph.NodeID{meta, mmap, rw}) {
		t.Fatalf("20 layers: cycle = %v, want the one found first", got)
	}
	// The first search visits a few states; the second and the look for
	// the locks that count, at most 4096 each.
	if _, visited := g.SearchCounted(e, nil); visited > 2*4096+100 {
		t.Fatalf("20 layers: %d states visited", visited)
	}
}
