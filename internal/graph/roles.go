package graph

import (
	"encoding/binary"
	"slices"
)

// Locks in fixed roles (docs/RULES.md R26). The owner tells the graph,
// at each sighting, which two locks it joined (Sight); a cycle of
// classes is held back when the pairs of locks of its strongly connected
// part are all known and close no cycle of locks, and some lock met the
// cycle: objects of two types in a tree whose levels alternate them,
// each locking its own lock, then its parent's.

// maxPairs bounds the pairs of locks a pair set keeps: past it the
// set is lost, and no cycle through its nodes is held back.
const maxPairs = 64

// maxRoles bounds the cycles of classes remembered as met (roles).
const maxRoles = 4096

// maxRolesPart bounds the nodes and edges rolesClean visits to find a
// strongly connected part: a larger one holds nothing back.
const maxRolesPart = 8192

// maxRolesCycles bounds the cycles searchUnmet looks at: past it, the
// first is reported.
const maxRolesCycles = 64

// pair is a pair of locks a sighting joined: the lock held, the lock taken.
type pair struct{ from, to NodeID }

// pairSet is what is known of the pairs of locks joined between two
// nodes (classes), whichever way the second was acquired: the pairs, or
// lost if some may be unknown.
type pairSet struct {
	from, to NodeID
	pairs    []pair
	lost     bool
}

// Sight records that a sighting from node from to node to joined the
// locks inst (the lock held, the lock taken), or, unless known, that
// some pairs of those nodes may go unseen. The nodes are classes (for
// two locks of one class, that class twice). It returns the edges to
// search again (Recheck): those through which R26 held a cycle back, if
// what is known of the pairs changed.
func (g *Graph) Sight(from, to NodeID, inst [2]NodeID, known bool) []*Edge {
	if g.pairsUnsure || g.roles == nil {
		return nil
	}
	s := g.pairSet(from, to)
	p := pair{inst[0], inst[1]}
	switch {
	case s.lost:
		return nil
	case !known || p.from == 0 || p.to == 0 || len(s.pairs) == maxPairs && !slices.Contains(s.pairs, p):
		g.unindexSet(s)
		s.pairs, s.lost = nil, true
	case slices.Contains(s.pairs, p):
		return nil
	default:
		s.pairs = append(s.pairs, p)
		g.indexPair(s, p)
		if !g.nodes[from].rolesHeld || !g.locksReach(p.to, p.from) {
			// A new pair that closes no cycle of locks changes no
			// verdict of R26: the cycles it held stay met and known.
			return nil
		}
	}
	return g.unmark(g.heldEdges(from, to))
}

// unmark takes the marks off es, the marked edges of a part whose
// verdict changed, and their nodes, and returns es: searched again, the
// part marks itself again where R26 still holds a cycle back in it
// (searchUnmet), and not where it holds none (a part whose pairs close a
// cycle of locks), so that later changes there search nothing again.
func (g *Graph) unmark(es []*Edge) []*Edge {
	for _, e := range es {
		e.rolesHeld, e.from.rolesHeld, e.to.rolesHeld = false, false, false
	}
	return es
}

// maxReach bounds the pairs locksReach looks at: past it, it answers yes.
const maxReach = 1 << 14

// locksReach reports whether lock goal is reachable from lock start by
// pairs of any set, or the search passed maxReach pairs.
func (g *Graph) locksReach(start, goal NodeID) bool {
	seen := map[NodeID]bool{start: true}
	queue := []NodeID{start}
	budget := maxReach
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if x == goal {
			return true
		}
		visit := func(y NodeID) bool {
			if budget--; budget < 0 {
				return false
			}
			if !seen[y] {
				seen[y] = true
				queue = append(queue, y)
			}
			return true
		}
		for s := range g.pairsAt[x] {
			for _, p := range s.pairs {
				if p.from == x && !visit(p.to) {
					return true
				}
			}
		}
		if n := g.nodes[x]; n != nil && n.solo {
			// A class of one lock: its pairs with others of the kind
			// are its edges (SetSolo), sighted by no one.
			for _, e := range n.out {
				if e.to.solo && !visit(e.To) {
					return true
				}
			}
		}
	}
	return false
}

// pairSet returns the pair set of nodes from and to, making it and the
// nodes.
func (g *Graph) pairSet(from, to NodeID) *pairSet {
	k := [2]NodeID{from, to}
	if s := g.sets[k]; s != nil {
		return s
	}
	fn, tn := g.Node(from, ""), g.Node(to, "")
	s := &pairSet{from: from, to: to}
	if g.sets == nil {
		g.sets = make(map[[2]NodeID]*pairSet)
	}
	g.sets[k] = s
	for _, n := range [2]*Node{fn, tn} {
		if n.sets == nil {
			n.sets = make(map[*pairSet]struct{})
		}
		n.sets[s] = struct{}{}
	}
	return s
}

// heldEdges returns the edges to search again once the pairs of nodes
// from and to changed in a way that may let a cycle R26 held back go (a
// cycle of locks closed, or pairs lost): every edge of the part that
// holds from through which R26 held a cycle back (the part's verdict is
// one for all its cycles, rolesClean), or of the whole graph past
// maxRolesPart. A set whose nodes are in no part together is in no
// verdict.
func (g *Graph) heldEdges(from, to NodeID) []*Edge {
	n := g.nodes[from]
	if n == nil || !n.rolesHeld {
		return nil
	}
	var es []*Edge
	budget := maxRolesPart
	fwd := g.reach(n, func(n *Node) []*Edge { return n.out }, func(x *Edge) *Node { return x.to }, &budget)
	bwd := g.reach(n, func(n *Node) []*Edge { return n.in }, func(x *Edge) *Node { return x.from }, &budget)
	if fwd == nil || bwd == nil {
		for _, e := range g.edges {
			if e.rolesHeld {
				es = append(es, e)
			}
		}
		return es
	}
	for m := range fwd {
		if !bwd[m] {
			continue
		}
		for _, e := range m.out {
			if e.rolesHeld && fwd[e.to] && bwd[e.to] {
				es = append(es, e)
			}
		}
	}
	return es
}

// indexPair files s under the locks of p, for forgetPairs.
func (g *Graph) indexPair(s *pairSet, p pair) {
	if g.pairsAt == nil {
		g.pairsAt = make(map[NodeID]map[*pairSet]struct{})
	}
	for _, id := range [2]NodeID{p.from, p.to} {
		ss := g.pairsAt[id]
		if ss == nil {
			ss = make(map[*pairSet]struct{})
			g.pairsAt[id] = ss
		}
		ss[s] = struct{}{}
	}
}

// unindexSet takes s out of the index of each lock of its pairs.
func (g *Graph) unindexSet(s *pairSet) {
	for _, p := range s.pairs {
		g.unindex(p.from, s)
		g.unindex(p.to, s)
	}
}

// unindex takes s out of lock id's index.
func (g *Graph) unindex(id NodeID, s *pairSet) {
	if ss := g.pairsAt[id]; ss != nil {
		delete(ss, s)
		if len(ss) == 0 {
			delete(g.pairsAt, id)
		}
	}
}

// forgetPairs drops the pairs of lock id, which is dead: it can join no
// cycle of locks any more.
func (g *Graph) forgetPairs(id NodeID) {
	for s := range g.pairsAt[id] {
		var others []NodeID
		s.pairs = slices.DeleteFunc(s.pairs, func(p pair) bool {
			switch id {
			case p.from:
				others = append(others, p.to)
			case p.to:
				others = append(others, p.from)
			default:
				return false
			}
			return true
		})
		for _, o := range others {
			if o != id && !slices.ContainsFunc(s.pairs, func(p pair) bool { return p.from == o || p.to == o }) {
				g.unindex(o, s)
			}
		}
	}
	delete(g.pairsAt, id)
}

// removeSets drops the pair sets of node n, which is being removed.
func (g *Graph) removeSets(n *Node) {
	for s := range n.sets {
		g.unindexSet(s)
		delete(g.sets, [2]NodeID{s.from, s.to})
		other := s.to
		if other == n.ID {
			other = s.from
		}
		if o := g.nodes[other]; o != nil && o != n {
			delete(o.sets, s)
		}
	}
	n.sets = nil
}

// LosePairs says that some pairs of locks of nodes from and to may never
// be seen (Sight with known unset). It returns the edges to search again.
func (g *Graph) LosePairs(from, to NodeID) []*Edge {
	return g.Sight(from, to, [2]NodeID{}, false)
}

// LoseAllPairs says that the pairs of every node may be unknown, now and
// from now on: R26 holds nothing back any more. It returns the edges
// through which it held a cycle back, to search again.
func (g *Graph) LoseAllPairs() []*Edge {
	if g.pairsUnsure {
		return nil
	}
	g.pairsUnsure = true
	if g.roles == nil {
		return nil
	}
	return g.roles.lose(g)
}

// loseAll is LoseAllPairs's work once R26 is enabled.
func (g *Graph) loseAll() []*Edge {
	g.sets, g.pairsAt, g.metKeys = nil, nil, nil
	var again []*Edge
	for _, n := range g.nodes {
		n.sets = nil
		for _, e := range n.out {
			if e.rolesHeld {
				again = append(again, e)
			}
		}
	}
	return again
}

// cycleKey returns c's nodes, from the least, as a string.
func cycleKey(c Cycle) string {
	ids := c.Key()
	b := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint64(b, uint64(id))
	}
	return string(b)
}

// EnableRoles makes searches apply R26, which the owner asks for once a
// lock of a named class exists: before, every pair of locks is a pair of
// nodes, and a program that never names a lock links none of it.
func (g *Graph) EnableRoles() {
	if g.roles == nil {
		g.roles = &rolesOps{
			search: (*Graph).searchRoles,
			forget: (*Graph).forgetPairs,
			remove: (*Graph).removeSets,
			lose:   (*Graph).loseAll,
		}
	}
}

// rolesOps is R26's part of the graph's work, reached through
// Graph.roles so that a program that never calls EnableRoles links none
// of it.
type rolesOps struct {
	search func(*Graph, *Edge, func(*Edge) bool, int, Cycle) (Cycle, int)
	forget func(*Graph, NodeID)
	remove func(*Graph, *Node)
	lose   func(*Graph) []*Edge
}

// searchRoles is what search does with c, the cycle through e it found,
// under R26: c, another cycle through e that no lock met, or nil, and
// the states it visited.
func (g *Graph) searchRoles(e *Edge, canBlock func(*Edge) bool, bound int, c Cycle) (Cycle, int) {
	part := g.rolesClean(e)
	if part == nil {
		return c, 0
	}
	return g.searchUnmet(e, canBlock, bound, c, part)
}

// SetSolo says that node id is a class of one lock: the pairs of an
// edge between two such nodes are that one pair, the nodes' ids, and the
// owner sights none (Sight). The lock is known by its node's id.
func (g *Graph) SetSolo(id NodeID) {
	if n := g.nodes[id]; n != nil {
		n.solo = true
	}
}

// pairsOf returns the pairs of locks joined between the nodes of edge e,
// either way of acquiring e.To, and whether they are all known.
func (g *Graph) pairsOf(e *Edge) ([]pair, bool) {
	if s := g.sets[[2]NodeID{e.From, e.To}]; s != nil {
		return s.pairs, !s.lost
	}
	if e.from.solo && e.to.solo {
		return []pair{{e.From, e.To}}, true
	}
	return nil, false
}

// rolesClean reports whether the strongly connected part of the graph
// that holds edge e is one R26 may hold cycles back in: every pair of
// its nodes joined by an edge has its pairs known, and the pairs of its
// nodes (those of two locks of one class included) close no cycle of
// locks. Every cycle through e lies in that part, and so does every
// cycle of locks along classes of it: a lock's pairs all join its class.
// It returns the part's edges, nil if it is not clean.
func (g *Graph) rolesClean(e *Edge) []*Edge {
	if g.pairsUnsure {
		return nil
	}
	budget := maxRolesPart
	fwd := g.reach(e.from, func(n *Node) []*Edge { return n.out }, func(x *Edge) *Node { return x.to }, &budget)
	bwd := g.reach(e.from, func(n *Node) []*Edge { return n.in }, func(x *Edge) *Node { return x.from }, &budget)
	if fwd == nil || bwd == nil {
		return nil
	}
	var edges []*Edge
	out := make(map[NodeID][]NodeID)
	add := func(ps []pair) {
		for _, p := range ps {
			if !slices.Contains(out[p.from], p.to) {
				out[p.from] = append(out[p.from], p.to)
			}
		}
	}
	for n := range fwd {
		if !bwd[n] {
			continue
		}
		if s := g.sets[[2]NodeID{n.ID, n.ID}]; s != nil {
			if s.lost {
				return nil
			}
			add(s.pairs)
		}
		for _, x := range n.out {
			if !fwd[x.to] || !bwd[x.to] {
				continue
			}
			edges = append(edges, x)
			ps, ok := g.pairsOf(x)
			if !ok {
				return nil
			}
			add(ps)
		}
	}
	if locksCycle(out) {
		return nil
	}
	return edges
}

// reach returns the nodes reachable from n along next, n included,
// counting them and the edges it follows against budget; nil past it.
func (g *Graph) reach(n *Node, out func(*Node) []*Edge, next func(*Edge) *Node, budget *int) map[*Node]bool {
	seen := map[*Node]bool{n: true}
	queue := []*Node{n}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		for _, x := range out(m) {
			if *budget--; *budget < 0 {
				return nil
			}
			if t := next(x); !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	return seen
}

// locksCycle reports whether the pairs out (the locks each is joined to)
// close a cycle of locks.
func locksCycle(out map[NodeID][]NodeID) bool {
	const (
		unseen = iota
		open
		done
	)
	state := make(map[NodeID]uint8, len(out))
	type frame struct {
		id NodeID
		i  int
	}
	for start := range out {
		if state[start] != unseen {
			continue
		}
		stack := []frame{{id: start}}
		state[start] = open
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.i == len(out[f.id]) {
				state[f.id] = done
				stack = stack[:len(stack)-1]
				continue
			}
			next := out[f.id][f.i]
			f.i++
			switch state[next] {
			case open:
				return true
			case unseen:
				state[next] = open
				stack = append(stack, frame{id: next})
			}
		}
	}
	return false
}

// met reports whether some lock met cycle c: the To of a pair of one
// edge's nodes and the From of a pair of the next edge's, now or when
// R26 held c back before (roles).
func (g *Graph) met(c Cycle) bool {
	key := cycleKey(c)
	if _, ok := g.metKeys[key]; ok {
		return true
	}
	for i, e := range c {
		in, _ := g.pairsOf(e)
		out, _ := g.pairsOf(c[(i+1)%len(c)])
		for _, p := range in {
			if slices.ContainsFunc(out, func(q pair) bool { return q.from == p.to }) {
				if len(g.metKeys) < maxRoles {
					if g.metKeys == nil {
						g.metKeys = make(map[string]struct{})
					}
					g.metKeys[key] = struct{}{}
				}
				return true
			}
		}
	}
	return false
}

// searchUnmet looks, in a part that rolesClean found clean (its edges
// part), for a cycle through e that no lock met, first the one the
// search found, then the others (each other simple cycle through e
// leaves out an edge of one held back: it searches again without each
// such edge in turn, and so on). It returns that cycle, or nil, having
// marked the part's edges and pair sets, or, past maxRolesCycles
// cycles, the first, reported as though R26 had held nothing back.
func (g *Graph) searchUnmet(e *Edge, canBlock func(*Edge) bool, bound int, first Cycle, part []*Edge) (Cycle, int) {
	// Marked whatever is returned: a met cycle skipped for an unmet one
	// is held back all the same, and a pair that later closes a cycle of
	// locks on it must search again.
	g.markPart(part)
	if !g.met(first) {
		return first, 0
	}
	type branch struct {
		out   []*Edge // the edges left out
		cycle Cycle
	}
	queue := []branch{{cycle: first}}
	used, looked := 0, 1
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		for _, f := range b.cycle {
			if f == e || slices.Contains(b.out, f) {
				continue
			}
			if looked++; looked > maxRolesCycles {
				return first, used
			}
			out := append(slices.Clip(b.out), f)
			without := func(x *Edge) bool {
				return !slices.Contains(out, x) && (canBlock == nil || canBlock(x))
			}
			d, k := g.searchCounted(e, without, bound)
			used += k
			if d == nil {
				continue
			}
			if !g.met(d) {
				return d, used
			}
			queue = append(queue, branch{out: out, cycle: d})
		}
	}
	g.RolesHeld++
	return nil, used
}

// markPart marks the edges of a part R26 may hold a cycle back in, and
// their nodes, so that a change in their pairs searches again (Sight).
func (g *Graph) markPart(part []*Edge) {
	for _, x := range part {
		x.rolesHeld = true
		x.from.rolesHeld = true
		x.to.rolesHeld = true
	}
}
