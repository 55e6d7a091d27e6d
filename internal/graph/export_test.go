package graph

// SharesList reports whether gates a and b are kept in one list.
func SharesList(a, b Gate) bool { return sameList(a, b) }

// Key is Gate.key.
func (g Gate) Key() string { return g.key() }

// Gated returns the number of locks some node's writers' gate holds.
func (g *Graph) Gated() int { return len(g.gated) }
