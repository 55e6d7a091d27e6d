package graph

import "math"

// SharesList reports whether gates a and b are kept in one list.
func SharesList(a, b Gate) bool { return sameList(a, b) }

// Key is Gate.key.
func (g Gate) Key() string { return g.key() }

// Gated returns the number of locks some node's writers' gate holds.
func (g *Graph) Gated() int { return len(g.gated) }

// SearchCounted is Recheck's search over the whole graph, returning also
// how many states (or nodes) its searches visited.
func (g *Graph) SearchCounted(e *Edge, canBlock func(*Edge) bool) (Cycle, int) {
	return g.searchCounted(e, canBlock, math.MaxInt)
}

// Retopos returns how many times the order was recomputed.
func (g *Graph) Retopos() int { return g.retopos }

// PairsIndexed returns how many locks the index of pairs files (R26).
func (g *Graph) PairsIndexed() int { return len(g.pairsAt) }

// PairSets returns how many pair sets the graph keeps (R26).
func (g *Graph) PairSets() int { return len(g.sets) }
