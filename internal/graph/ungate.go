package graph

// Ungate takes lock id out of every edge's gate, as if no sighting had
// held it (docs/RULES.md R24), and returns the edges it changed, for the
// caller to search again (Recheck) and, should id turn out to gate them
// after all, to put it back (Regate). Read gates and writers' gates are
// left alone. It costs a walk of every edge.
func (g *Graph) Ungate(id NodeID) []*Edge {
	var changed []*Edge
	for _, e := range g.edges {
		if e.Gate.Has(id) {
			e.Gate = e.Gate.Without(id)
			changed = append(changed, e)
		}
	}
	return changed
}

// Regate puts lock id back into the gate of e, an edge Ungate took it
// out of, unless e has left the graph or a sighting since narrowed its
// gate from was, what Ungate left. It reports whether it did.
func (g *Graph) Regate(e *Edge, was Gate, id NodeID) bool {
	if g.edges[e.key()] != e || !e.Gate.Equal(was) {
		return false
	}
	e.Gate = e.Gate.Union(NewGate([]NodeID{id}))
	return true
}

// Equal reports whether g and o hold the same ids.
func (g Gate) Equal(o Gate) bool {
	if g.Len() != o.Len() {
		return false
	}
	for i, id := range g.ids {
		if i+1 != g.skip && !o.Has(id) {
			return false
		}
	}
	return true
}
