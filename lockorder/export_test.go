//go:build !syncwatch_off

package lockorder

// GraphSize returns the number of nodes and edges in the order graph.
func GraphSize() (nodes, edges int) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	return eng.graph.Len(), eng.graph.Edges()
}

// Chains returns the number of lock chains in the cache.
func Chains() int { return chains.Len() }
