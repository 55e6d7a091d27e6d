package graph

// heldBack reports whether cycle c cannot deadlock by the rule below, the
// ∃ rule. search applies it to the cycle its first search finds,
// and its second search (searchStates with an exists) to the paths it
// explores.
//
// The rule (docs/RULES.md R8): a read-only edge X->Y of c, whose next
// edge leaves Y from read holds only, cannot block if some edge of c
// holds a lock of Y's writers' gate for writing, other than an edge that
// may write Y itself (one taken for writing whose To's writers' gate
// holds that lock: holds leaves it out).
//
// The sets. The rule holds c back exactly when held, the union over c's
// edges of holds(e), meets wg, the union of W(Y) over the read edges
// X->Y of c whose next edge is from read holds only. Only the locks of
// g.gated can be in both, so holds keeps only those: where no writers'
// gate holds a lock, heldBack costs nothing.
func (g *Graph) heldBack(c Cycle) bool {
	if g.exclusive(c) {
		return true
	}
	if len(g.gated) == 0 {
		return false
	}
	var held, wg Gate
	for i, e := range c {
		held = held.With(g.holds(e))
		if !e.ToWrite && e.to.writers.Len() > 0 && !c[(i+1)%len(c)].FromWrite {
			wg = wg.With(e.to.writers)
		}
	}
	return held.Meets(wg)
}

// exclusive reports whether two edges of c hold one lock for writing (in
// their gates, or as their From, always write-held: Src): then c cannot
// deadlock, the pair rule (docs/RULES.md R9). Rule R18 (R-RW) extends it to a write
// hold against a read hold (RGate, Hold); a cycle held back so is noted
// (noteRW), to be searched again should that lock turn loose (Loosen).
func (g *Graph) exclusive(c Cycle) bool {
	for i, e := range c {
		h := holdsOf(e, nil, false)
		for _, f := range c[i+1:] {
			if h.Meets(holdsOf(f, nil, false)) {
				return true
			}
		}
	}
	for i, e := range c {
		for _, f := range c[i+1:] {
			if rw := g.rwExcluded(e, f); rw.Len() > 0 {
				g.noteRW(rw.IDs(), c[0])
				return true
			}
		}
	}
	return false
}

// holds returns the locks of g.gated (those some writers' gate holds)
// that e's goroutine holds for writing, e.Gate and e.Src, less e.To's
// writers' gate if e may write To (see heldBack).
func (g *Graph) holds(e *Edge) Gate { return holdsOf(e, g.gated, true) }

// holdsOf returns the locks e's goroutine holds for writing, e.Gate and
// e.Src: those of among (all if among is nil), less e.To's writers' gate
// if e may write To and maybeY is set (holds).
func holdsOf(e *Edge, among map[NodeID]int, maybeY bool) Gate {
	return collect(e.Gate, e.Src, func(id NodeID) bool {
		return (among == nil || inCount(among, id)) &&
			!(maybeY && e.ToWrite && e.to.writers.Has(id))
	})
}

// collect returns the locks of w, and extra if it is not 0, that keep
// keeps, in a new list.
func collect(w Gate, extra NodeID, keep func(NodeID) bool) Gate {
	var ids []NodeID
	for i, id := range w.ids {
		if i+1 != w.skip && keep(id) {
			ids = append(ids, id)
		}
	}
	if extra != 0 && keep(extra) {
		ids = append(ids, extra)
	}
	if len(ids) == 0 {
		return Gate{}
	}
	return NewGate(ids)
}

// in reports whether id is in set; inCount, whether it is in count.
func in(set map[NodeID]struct{}, id NodeID) bool   { _, ok := set[id]; return ok }
func inCount(count map[NodeID]int, id NodeID) bool { _, ok := count[id]; return ok }

// exists is what a search under the rule of heldBack adds to its states:
// the sets held and wg of the paths searched, interned, so that a state
// carries them as an index (state.sets). Index 0 is two empty sets.
// held keeps only the locks of among: those wg can come to hold.
type exists struct {
	sets  []pathSets
	index map[[4]string]uint32
	among map[NodeID]int
	// pair keeps, for the pair rule (exclusive), the locks that two edges
	// the search can take, e among them, hold; all of them if nil.
	pair map[NodeID]int
	// back holds the nodes that reach e.From, the only ones a path of the
	// search can go through; nil if not known (any node).
	back map[*Node]bool
	// loose is the graph's: the locks whose read holds R-RW does not
	// count (see Loosen).
	loose map[NodeID]struct{}
	// closing is the edge the search closes its cycles on, and rw the
	// locks by which R-RW cut a path of it (see follow).
	closing *Edge
	rw      []NodeID
}

// pathSets are a path's sets: held and wg of the rule of heldBack, all,
// the locks of x.pair its edges hold for writing (exclusive), and reads,
// those they hold at least for reading (R-RW).
type pathSets struct{ held, wg, all, reads Gate }

// newExists returns the sets of a search under the rule of heldBack for
// a cycle through e, visiting nodes of rank up to bound, how many nodes
// the search can go through (region: those e.To reaches that reach
// e.From), and how many it visited to find them and the locks worth
// keeping in held. Those are
// the locks of the writers' gates that wg can take in: of the To of e
// and of the read-only edges the search can take (from a node e.To
// reaches, by edges that can block, e.From left out as the search leaves
// it out). A held lock no such gate holds is in no wg, and kept it would
// only tell apart states the rule does not: the paths under different
// locks that a layered graph multiplies. Should that look visit more
// than budget nodes, held keeps every lock of g.gated.
func (g *Graph) newExists(e *Edge, canBlock func(*Edge) bool, bound, budget int) (x *exists, region, visited int) {
	x = &exists{sets: []pathSets{{}}, index: map[[4]string]uint32{{}: 0}, among: g.gated, loose: g.loose, closing: e}
	among := make(map[NodeID]int)
	// holders keeps, for each lock, a few of the edges that hold it; a
	// lock goes into x.pair once two of them differ in From and in To.
	// Two edges out of one node, or into one, are never both in a simple
	// cycle: a lock they alone share (every edge out of a lock held for
	// writing has it as Src) would only tell apart paths the rule does not.
	holders := make(map[NodeID][]*Edge)
	x.pair = make(map[NodeID]int)
	add := func(e *Edge) {
		if w := e.to.writers; !e.ToWrite {
			for i, id := range w.ids {
				if i+1 != w.skip {
					among[id] = 1
				}
			}
		}
		for _, id := range holdsOf(e, nil, false).Union(readsOf(e, nil, g.loose)).IDs() {
			if _, ok := x.pair[id]; ok {
				continue
			}
			hs := holders[id]
			for _, h := range hs {
				if h.From != e.From && h.To != e.To {
					x.pair[id] = 1
					break
				}
			}
			if len(hs) < 4 {
				holders[id] = append(hs, e)
			}
		}
	}
	add(e)
	// The nodes that reach e.From: only their edges can be on a cycle
	// through e.
	back := map[*Node]bool{e.from: true}
	queue := []*Node{e.from}
	visited = 0
	for ; len(queue) > 0; queue = queue[1:] {
		if visited++; visited > budget {
			return x, visited, visited
		}
		for _, in := range queue[0].in {
			if m := in.from; !back[m] && m.rank <= bound && (canBlock == nil || canBlock(in)) {
				back[m] = true
				queue = append(queue, m)
			}
		}
	}
	g.epoch++
	mark := g.epoch
	e.to.mark = mark
	queue = append(queue[:0], e.to)
	region = 0
	for ; len(queue) > 0; queue = queue[1:] {
		if region++; region > budget {
			return x, region, visited + region
		}
		for _, next := range queue[0].out {
			if next.to.rank > bound || !back[next.to] || (canBlock != nil && !canBlock(next)) {
				continue
			}
			add(next)
			if m := next.to; m.mark != mark && m != e.from {
				m.mark = mark
				queue = append(queue, m)
			}
		}
	}
	x.back = back
	x.among = among
	return x, region, visited + region
}

// intern returns the index of the sets held, wg, all and reads.
func (x *exists) intern(held, wg, all, reads Gate) uint32 {
	k := [4]string{held.key(), wg.key(), all.key(), reads.key()}
	i, ok := x.index[k]
	if !ok {
		i = uint32(len(x.sets))
		x.sets = append(x.sets, pathSets{held, wg, all, reads})
		x.index[k] = i
	}
	return i
}

// follow gives the states ways, which follow over edge e a state whose
// sets are x.sets[from], their sets: held with e's locks (holds), and wg
// with e.To's writers' gate in a state whose next edge must be from read
// holds (readNext), where e is read-only. ways are as the gates alone
// make them: two if split (e counted with e.To's writers' gate narrows
// the gate less than without it), else one. Where counting e with the
// writers' gate changes wg but not the gate, follow splits the state
// itself, the gate the same in both. It leaves out the states whose sets
// meet: heldBack holds back every cycle they begin. It returns the
// states kept, and how many.
func (x *exists) follow(from uint32, e *Edge, ways [2]state, split bool) ([2]state, int) {
	s := x.sets[from]
	mine := holdsOf(e, x.pair, false)
	if mine.Meets(s.all) {
		return ways, 0 // the pair rule (exclusive)
	}
	reads := readsOf(e, x.pair, x.loose)
	if rw := mine.Intersect(s.reads).Union(reads.Intersect(s.all)); rw.Len() > 0 {
		x.rw = append(x.rw, rw.IDs()...)
		return ways, 0 // rule R-RW
	}
	all := s.all.With(mine)
	reads = s.reads.With(reads)
	held := s.held.With(holdsOf(e, x.among, true))
	if held.Meets(s.wg) {
		return ways, 0
	}
	wg := s.wg
	if !e.ToWrite {
		wg = wg.With(e.to.writers)
	}
	if !split && wg.Len() != s.wg.Len() {
		ways[0].next = writeNext
		ways[1] = state{id: ways[0].id, gate: ways[0].gate, next: readNext}
		split = true
	}
	ways[0].sets = x.intern(held, s.wg, all, reads)
	if !split || held.Meets(wg) {
		return ways, 1
	}
	ways[1].sets = x.intern(held, wg, all, reads)
	return ways, 2
}

// addPairs adds to x.pair the locks two edges of d hold that it lacks (d
// revisits a node), and reports whether it added any.
func (x *exists) addPairs(d Cycle) bool {
	added := false
	for i, a := range d {
		h := holdsOf(a, nil, false).Union(readsOf(a, nil, x.loose))
		for _, b := range d[i+1:] {
			for _, id := range h.Intersect(holdsOf(b, nil, false).Union(readsOf(b, nil, x.loose))).IDs() {
				if _, ok := x.pair[id]; !ok {
					x.pair[id] = 1
					added = true
				}
			}
		}
	}
	return added
}
