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
// out of when e had seen sightings observations more than its first,
// unless e has left the graph or was seen since: a sighting since held id
// or did not, and Regate cannot tell. It reports whether it did.
func (g *Graph) Regate(e *Edge, sightings uint32, id NodeID) bool {
	if !g.Holds(e) || e.Sightings != sightings {
		return false
	}
	e.Gate = e.Gate.Union(NewGate([]NodeID{id}))
	return true
}

// Holds reports whether e is an edge of g: not removed with a node of its.
func (g *Graph) Holds(e *Edge) bool { return g.edges[e.key()] == e }
