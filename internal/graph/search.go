package graph

import (
	"slices"
	"sort"

	"github.com/syncwatch/syncwatch/internal/hb"
)

func (g *Graph) maxSearch() int {
	if g.MaxSearch > 0 {
		return g.MaxSearch
	}
	return 1 << 20
}

// reorder restores the topological order after adding fn->tn with
// fn.rank > tn.rank (Pearce-Kelly). It returns false, changing nothing, if
// tn reaches fn (the edge closes a cycle) or the search hit its bound.
func (g *Graph) reorder(fn, tn *Node) bool {
	lb, ub := tn.rank, fn.rank
	g.epoch++
	fwdMark := g.epoch
	g.epoch++
	bwdMark := g.epoch
	budget := g.maxSearch()

	var fwd []*Node
	stack := []*Node{tn}
	tn.mark = fwdMark
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fwd = append(fwd, n)
		if budget--; budget < 0 {
			return false
		}
		for _, e := range n.out {
			m := e.to
			if m == fn {
				return false
			}
			if m.mark != fwdMark && m.rank < ub {
				m.mark = fwdMark
				stack = append(stack, m)
			}
		}
	}
	var bwd []*Node
	stack = append(stack[:0], fn)
	fn.mark = bwdMark
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		bwd = append(bwd, n)
		for _, e := range n.in {
			m := e.from
			if m.mark != bwdMark && m.rank > lb {
				m.mark = bwdMark
				stack = append(stack, m)
			}
		}
	}
	byRank := func(a, b *Node) int { return a.rank - b.rank }
	slices.SortFunc(fwd, byRank)
	slices.SortFunc(bwd, byRank)
	ranks := make([]int, 0, len(fwd)+len(bwd))
	for _, n := range bwd {
		ranks = append(ranks, n.rank)
	}
	for _, n := range fwd {
		ranks = append(ranks, n.rank)
	}
	sort.Ints(ranks)
	i := 0
	for _, n := range bwd {
		n.rank = ranks[i]
		i++
	}
	for _, n := range fwd {
		n.rank = ranks[i]
		i++
	}
	return true
}

// state is a node reached with the set of gate locks common to every edge
// of the path so far, and what the path's next edge must be for the last
// edge to have been counted so (see SetWritersGate).
type state struct {
	id   NodeID
	gate string
	next uint8
	// sets is, in the search of the rule of heldBack, the index in
	// exists.sets of the path's sets held and wg; 0 in the other. It
	// fits in next's padding: the other's states are no larger for it.
	sets uint32
}

// The values of state.next.
const (
	// anyNext: the last edge counts the same whatever comes next.
	anyNext uint8 = iota
	// writeNext: the last edge, a read-only edge whose To has a writers'
	// gate, was counted without it: the next edge must be from a write
	// hold (FromWrite).
	writeNext
	// readNext: it was counted with it: the next edge must be from read
	// holds only.
	readNext
)

// allows reports whether edge e may follow a state whose next is next.
func allows(next uint8, e *Edge) bool {
	switch next {
	case writeNext:
		return e.FromWrite
	case readNext:
		return !e.FromWrite
	}
	return true
}

// counted returns cur intersected with e's gate counted both ways: without
// e.To's writers' gate (plain) and with it (with), and whether they differ.
// When they do not (e taken for writing, no writers' gate, or none of its
// locks left in cur), the next edge does not matter. with allocates only
// when it is narrower than cur.
func counted(cur Gate, e *Edge) (plain, with Gate, split bool) {
	plain = cur.Intersect(e.Gate)
	if e.ToWrite || e.to.writers.Len() == 0 || plain.Len() == cur.Len() {
		return plain, plain, false
	}
	with = cur.IntersectEither(e.Gate, e.to.writers)
	return plain, with, with.Len() != plain.Len()
}

type step struct {
	prev state
	edge *Edge // nil for a start state
}

// search looks for a path e.To ->* e.From, within nodes of rank up to
// bound, that with e forms a cycle that can deadlock: every edge can
// block, no gate is common to all edges (a read-only edge's counted with
// its To's writers' gate where the next edge allows it: see
// SetWritersGate), and no read edge is held back by the rule of
// heldBack. It returns the shortest such cycle, starting with e, or nil.
//
// It looks first for the shortest cycle the gates allow (searchStates),
// and only if the rule of heldBack holds that one back, again, with the
// rule's sets in the states. Where the rule does not hold the first
// cycle back, that costs one pass over it (heldBack), and nothing where
// no writers' gate holds a lock (g.gated is empty). The second search
// runs on a budget (existsMin, existsFactor) and keeps only the locks
// that can count (newExists); past the budget the cycle found first is
// reported (docs/RULES.md R10).
//
// While the order is not kept, what it visits counts towards recomputing
// the order (see Graph.searched).
func (g *Graph) search(e *Edge, canBlock func(*Edge) bool, bound int) Cycle {
	c, n := g.searchCounted(e, canBlock, bound)
	if c != nil && g.roles != nil {
		var m int
		c, m = g.roles.search(g, e, canBlock, bound, c)
		n += m
	}
	if !g.ranksValid {
		if g.searched += n; g.searched >= len(g.nodes)+len(g.edges) {
			g.retopo()
		}
	}
	return c
}

// unordered returns canBlock, less the edges whose every sighting
// happened before every sighting of e, or after (docs/RULES.md R21): no
// cycle through e and one of them can deadlock. The search looks for a
// cycle through e among the others. A cycle that only two other edges of
// it order is not ruled out by a search from e, and is reported.
func unordered(e *Edge, canBlock func(*Edge) bool) func(*Edge) bool {
	if !e.Sight.Known() {
		return canBlock
	}
	return func(x *Edge) bool {
		return (canBlock == nil || canBlock(x)) && !hb.Ordered(x.Sight, uint64(x.To), e.Sight, uint64(e.To))
	}
}

// existsMin and existsFactor make the budget of the search under the
// rule of heldBack: existsFactor times the states the first search
// visited, existsMin at least, g.maxSearch() at most. The first search
// visits few states when it finds a short cycle at once, however large
// the graph; existsMin leaves the second room for a few thousand paths
// around it, a few milliseconds at most.
const (
	existsMin    = 4096
	existsFactor = 8
)

// searchCounted is search, less its count towards the order, returning
// also how many states (nodes in a search over nodes) its searches
// visited.
func (g *Graph) searchCounted(e *Edge, canBlock func(*Edge) bool, bound int) (Cycle, int) {
	if canBlock != nil && !canBlock(e) {
		return nil, 0
	}
	canBlock = unordered(e, canBlock)
	c, _, n := g.searchStates(e, canBlock, bound, nil, g.maxSearch())
	if c == nil || !g.heldBack(c) {
		return c, n
	}
	x, region, m := g.newExists(e, canBlock, bound, g.maxSearch())
	budget := min(g.maxSearch(), max(existsMin, existsFactor*max(n, region)))
	used := 0
	for {
		d, done, k := g.searchStates(e, canBlock, bound, x, budget-used)
		used += k
		if !done {
			return c, n + m + used
		}
		if d == nil || !x.addPairs(d) {
			if len(x.rw) > 0 {
				g.noteRW(NewGate(x.rw).IDs(), e)
			}
			return d, n + m + used
		}
	}
}

// searchStates searches breadth first over states (node, gate, next): the
// gate is what the path's edges have in common, each counted as the rule
// of SetWritersGate says given the edge after it, and next says what the
// edge after the last must be. A read-only edge into a node with a
// writers' gate that would narrow the gate differently either way leads
// to two states, one per way, and each admits only the edges after it
// that make it the way the rule counts it; the path closes on e, whose
// own way was fixed at the start, the same way. So the search finds
// exactly the cycles whose gate, counted by the rule, is empty.
//
// With x, the states carry the sets of heldBack's rule too (see
// exists.follow): both only grow along a path, so a path whose sets meet
// is dropped with everything after it, and the search finds exactly the
// cycles whose gate is empty and that heldBack does not hold back.
//
// It returns the shortest cycle found, or nil, whether the search came
// to its end (false if budget states were visited first), and how many
// states it visited.
func (g *Graph) searchStates(e *Edge, canBlock func(*Edge) bool, bound int, x *exists, budget int) (Cycle, bool, int) {
	start := e.Gate
	starts := [2]state{{id: e.To, gate: start.key()}}
	gates := map[string]Gate{starts[0].gate: start}
	split := false
	if !e.ToWrite && e.to.writers.Len() > 0 {
		if with := start.Union(e.to.writers); with.Len() != start.Len() {
			starts[0].next = writeNext
			starts[1] = state{id: e.To, gate: with.key(), next: readNext}
			gates[starts[1].gate] = with
			split = true
		}
	}
	n := 1 + btoi(split)
	if x != nil {
		starts, n = x.follow(0, e, starts, split)
	} else if !split && start.Len() == 0 {
		c, n := g.searchPlain(e, canBlock, bound)
		return c, true, n
	} else if c, m := g.searchPlain(e, canBlock, bound); c == nil && m < g.maxSearch() {
		// No path back at all, gates aside: no cycle with an empty gate
		// either. A search over nodes costs O(V+E); one over gate states
		// can cost far more in a graph dense with gates.
		return nil, true, m
	}
	parent := make(map[state]step, 16)
	queue := make([]state, 0, 16)
	for _, s := range starts[:n] {
		parent[s] = step{}
		queue = append(queue, s)
	}
	visited := 0
	for len(queue) > 0 && visited < budget {
		cur := queue[0]
		queue = queue[1:]
		visited++
		n := g.nodes[cur.id]
		if n == nil {
			continue
		}
		curGate := gates[cur.gate]
		for _, next := range n.out {
			if !allows(cur.next, next) || next.to.rank > bound || (canBlock != nil && !canBlock(next)) ||
				(x != nil && x.back != nil && !x.back[next.to]) {
				continue
			}
			plain, with, split := counted(curGate, next)
			ways := [2]state{{id: next.To, gate: plain.key()}}
			if split {
				ways[0].next = writeNext
				ways[1] = state{id: next.To, gate: with.key(), next: readNext}
				gates[ways[1].gate] = with
			}
			gates[ways[0].gate] = plain
			k := 1 + btoi(split)
			if x != nil {
				ways, k = x.follow(cur.sets, next, ways, split)
			}
			for _, ns := range ways[:k] {
				if _, seen := parent[ns]; seen {
					continue
				}
				parent[ns] = step{prev: cur, edge: next}
				if ns.id != e.From {
					queue = append(queue, ns)
				} else if ns.gate == "" && allows(ns.next, e) {
					return buildCycle(e, parent, ns), true, visited
				}
			}
		}
	}
	return nil, len(queue) == 0, visited
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// searchPlain is search for an edge with no gate: any path back closes
// a cycle, so a breadth-first search over nodes (not gate states) with
// marks on the nodes finds the shortest. It returns it, or nil, and how
// many nodes it visited.
func (g *Graph) searchPlain(e *Edge, canBlock func(*Edge) bool, bound int) (Cycle, int) {
	g.epoch++
	mark := g.epoch
	start := e.to
	start.mark, start.via = mark, nil
	queue := []*Node{start}
	budget, visited := g.maxSearch(), 0
	for len(queue) > 0 && visited < budget {
		n := queue[0]
		queue = queue[1:]
		visited++
		for _, next := range n.out {
			m := next.to
			if m.mark == mark || m.rank > bound || (canBlock != nil && !canBlock(next)) {
				continue
			}
			m.mark, m.via = mark, next
			if m == e.from {
				var path []*Edge
				for x := m; x != start; x = x.via.from {
					path = append(path, x.via)
				}
				slices.Reverse(path)
				return append(Cycle{e}, path...), visited
			}
			queue = append(queue, m)
		}
	}
	return nil, visited
}

// buildCycle returns e followed by the path to end, back from end through
// parent to a start state.
func buildCycle(e *Edge, parent map[state]step, end state) Cycle {
	var path []*Edge
	for st := parent[end]; st.edge != nil; st = parent[st.prev] {
		path = append(path, st.edge)
	}
	slices.Reverse(path)
	return append(Cycle{e}, path...)
}

// retopo recomputes the topological order after edges were removed. If the
// graph is acyclic again, searches go back to the incremental order.
func (g *Graph) retopo() {
	g.unranked, g.searched = 0, 0
	g.retopos++
	indeg := make(map[NodeID]int, len(g.nodes))
	for id, n := range g.nodes {
		indeg[id] += 0
		for _, e := range n.out {
			indeg[e.To]++
		}
	}
	var ready, order []NodeID
	for id, d := range indeg {
		if d == 0 {
			ready = append(ready, id)
		}
	}
	for len(ready) > 0 {
		id := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		order = append(order, id)
		for _, e := range g.nodes[id].out {
			if indeg[e.To]--; indeg[e.To] == 0 {
				ready = append(ready, e.To)
			}
		}
	}
	if len(order) != len(g.nodes) {
		return
	}
	for i, id := range order {
		n := g.nodes[id]
		n.rank = i
		for _, e := range n.out {
			e.cyclic = false
		}
	}
	g.nextRank = len(order)
	g.cyclic = 0
	g.ranksValid = true
}
