package graph

import (
	"math"
	"slices"
	"sort"
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
// of the path so far.
type state struct {
	id   NodeID
	gate string
}

type step struct {
	prev state
	edge *Edge
}

// search looks for a path e.To ->* e.From that, with e, forms a cycle that
// can deadlock: every edge can block and no gate is common to all edges
// (each counted with gateOf).
// It returns the shortest such cycle, starting with e, or nil.
func (g *Graph) search(e *Edge, canBlock func(*Edge) bool) Cycle {
	return g.searchWithin(e, canBlock, math.MaxInt)
}

// searchWithin is search visiting only nodes of rank up to bound.
func (g *Graph) searchWithin(e *Edge, canBlock func(*Edge) bool, bound int) Cycle {
	if canBlock != nil && !canBlock(e) {
		return nil
	}
	first := g.gateOf(e)
	if first.Len() == 0 {
		return g.searchPlain(e, canBlock, bound)
	}
	start := state{id: e.To, gate: first.key()}
	gates := map[string]Gate{start.gate: first}
	parent := map[state]step{start: {}}
	queue := []state{start}
	budget := g.maxSearch()
	for len(queue) > 0 && budget > 0 {
		cur := queue[0]
		queue = queue[1:]
		budget--
		n := g.nodes[cur.id]
		if n == nil {
			continue
		}
		curGate := gates[cur.gate]
		for _, next := range n.out {
			if canBlock != nil && !canBlock(next) {
				continue
			}
			ng := curGate.Intersect(g.gateOf(next))
			if next.to.rank > bound {
				continue
			}
			ns := state{id: next.To, gate: ng.key()}
			if _, seen := parent[ns]; seen {
				continue
			}
			gates[ns.gate] = ng
			parent[ns] = step{prev: cur, edge: next}
			if ns.id == e.From && ng.Len() == 0 {
				return buildCycle(e, parent, ns, start)
			}
			if ns.id != e.From {
				queue = append(queue, ns)
			}
		}
	}
	return nil
}

// searchPlain is search for an edge with no gate: any path back closes
// a cycle, so a breadth-first search over nodes (not gate states) with
// marks on the nodes finds the shortest.
func (g *Graph) searchPlain(e *Edge, canBlock func(*Edge) bool, bound int) Cycle {
	g.epoch++
	mark := g.epoch
	start := e.to
	start.mark, start.via = mark, nil
	queue := []*Node{start}
	budget := g.maxSearch()
	for len(queue) > 0 && budget > 0 {
		n := queue[0]
		queue = queue[1:]
		budget--
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
				return append(Cycle{e}, path...)
			}
			queue = append(queue, m)
		}
	}
	return nil
}

func buildCycle(e *Edge, parent map[state]step, end, start state) Cycle {
	var path []*Edge
	for s := end; s != start; {
		st := parent[s]
		path = append(path, st.edge)
		s = st.prev
	}
	slices.Reverse(path)
	return append(Cycle{e}, path...)
}

// retopo recomputes the topological order after edges were removed. If the
// graph is acyclic again, searches go back to the incremental order.
func (g *Graph) retopo() {
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
