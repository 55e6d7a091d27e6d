package graph

// Ungate takes lock id out of every edge's gate and read gate, as if no
// sighting had held it (docs/RULES.md R24), and returns the edges it
// changed, for the caller to search again (Recheck). Writers' gates are
// the caller's (SetWritersGate). It costs a walk of every edge.
func (g *Graph) Ungate(id NodeID) []*Edge {
	var changed []*Edge
	for _, e := range g.edges {
		if e.Gate.Has(id) || e.RGate.Has(id) {
			e.Gate, e.RGate = e.Gate.Without(id), e.RGate.Without(id)
			changed = append(changed, e)
		}
	}
	return changed
}
