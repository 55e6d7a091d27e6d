package graph

// Rule R18 (R-RW) of docs/RULES.md: a lock held for writing by one edge of a
// cycle and held at all (for reading or writing) by another excludes
// the two: they cannot both wait in a deadlock along the cycle. The pair
// rule (exclusive) applies it; this file keeps what it needs: each
// edge's read holds, and which read holds may have been handed over.

// readsOf returns the locks e's goroutine holds at least for reading at
// every sighting, e.RGate and e.Hold, less the locks of loose,
// and only those of among (all if among is nil).
func readsOf(e *Edge, among map[NodeID]int, loose map[NodeID]struct{}) Gate {
	if e.RGate.Len() == 0 && e.Hold == 0 {
		return Gate{}
	}
	return collect(e.RGate, e.Hold, func(id NodeID) bool {
		return !in(loose, id) && (among == nil || inCount(among, id))
	})
}

// rwExcluded returns the locks by which rule R-RW excludes edges e and
// f: held for writing by one, at least for reading by the other.
func (g *Graph) rwExcluded(e, f *Edge) Gate {
	we, wf := holdsOf(e, nil, false), holdsOf(f, nil, false)
	re, rf := readsOf(e, nil, g.loose), readsOf(f, nil, g.loose)
	return we.Intersect(rf).Union(wf.Intersect(re))
}

// maxRWHeld bounds the edges kept for one lock in rwHeld before those
// no longer in the graph are dropped.
const maxRWHeld = 64

// noteRW records that rule R-RW held back, on the locks ids, a cycle
// closed by edge e: should one of them turn loose, e is searched again.
func (g *Graph) noteRW(ids []NodeID, e *Edge) {
	if g.rwHeld == nil {
		g.rwHeld = make(map[NodeID][]*Edge)
	}
	for _, id := range ids {
		es := g.rwHeld[id]
		if len(es) > 0 && es[len(es)-1] == e {
			continue
		}
		if len(es) >= maxRWHeld {
			es = g.linked(es)
		}
		g.rwHeld[id] = append(es, e)
	}
}

// linked returns the edges of es still in the graph, once each.
func (g *Graph) linked(es []*Edge) []*Edge {
	seen := make(map[*Edge]bool, len(es))
	kept := es[:0]
	for _, e := range es {
		if !seen[e] && g.edges[e.key()] == e {
			seen[e] = true
			kept = append(kept, e)
		}
	}
	clear(es[len(kept):])
	return kept
}

// Loosen records that a read hold of lock id was released by a goroutine
// that did not hold it: a goroutine that read-held id may have handed
// its hold over, so read holds of id exclude nothing under rule R-RW
// from now on. It returns the edges whose cycles R-RW held back on id,
// for the owner to search again (Recheck).
func (g *Graph) Loosen(id NodeID) []*Edge {
	if g.loose == nil {
		g.loose = make(map[NodeID]struct{})
	}
	g.loose[id] = struct{}{}
	es := g.linked(g.rwHeld[id])
	delete(g.rwHeld, id)
	return es
}

// Forget drops lock id, which is dead, from the graph's sets of locks
// (Loosen) and its edges' pairs (R26) where it is not a node.
func (g *Graph) Forget(id NodeID) {
	delete(g.loose, id)
	delete(g.rwHeld, id)
	if g.roles != nil {
		g.roles.forget(g, id)
	}
}
