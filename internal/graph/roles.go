package graph

import (
	"encoding/binary"
	"slices"
)

// Instances in fixed roles (docs/RULES.md R26). A cycle of classes is
// held back when the run shows the locks its edges joined, and they form
// no cycle of locks although every class of it met itself on both sides:
// objects of two types in a tree whose levels alternate them, each
// locking its own lock and then its parent's.

// maxPairs bounds the pairs of locks an edge keeps: past it the edge's
// pairs are lost, and no cycle through it is held back by R26.
const maxPairs = 64

// maxRoles bounds the cycles of classes R26 remembers a junction of, met
// by one lock, for.
const maxRoles = 4096

// pair is a pair of locks an edge joined: From's lock held, To's taken.
type pair struct{ from, to NodeID }

// addPair records the locks o joined (Observation.Inst) as a pair of e,
// and reports whether what e knows of its pairs changed: a pair new to
// it, or its pairs lost (an unknown pair, or one past maxPairs).
func (g *Graph) addPair(e *Edge, o Observation) bool {
	if e.pairsLost {
		return false
	}
	p := pair{o.Inst[0], o.Inst[1]}
	if p.from == 0 || p.to == 0 {
		e.pairs, e.pairsLost = nil, true
		return true
	}
	if slices.Contains(e.pairs, p) {
		return false
	}
	if len(e.pairs) == maxPairs {
		e.pairs, e.pairsLost = nil, true
		return true
	}
	e.pairs = append(e.pairs, p)
	g.indexPair(e, o.Inst)
	return true
}

// indexPairs files e under the locks of its pairs that are not yet, for
// forgetPairs.
func (g *Graph) indexPair(e *Edge, inst [2]NodeID) {
	if g.pairsAt == nil {
		g.pairsAt = make(map[NodeID][]*Edge)
	}
	for _, id := range inst {
		if es := g.pairsAt[id]; len(es) == 0 || es[len(es)-1] != e {
			g.pairsAt[id] = append(es, e)
		}
	}
}

// forgetPairs drops the pairs of lock id, which is dead: it can join no
// cycle of locks any more.
func (g *Graph) forgetPairs(id NodeID) {
	for _, e := range g.pairsAt[id] {
		e.pairs = slices.DeleteFunc(e.pairs, func(p pair) bool { return p.from == id || p.to == id })
	}
	delete(g.pairsAt, id)
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

// rolesHold reports whether R26 holds cycle c back: every edge's pairs
// are known (those of both ways of acquiring its To, R5), every junction
// of c (a class, To of one edge and From of the next) has a lock To of a
// pair of the first edge and From of a pair of the next, and no lock
// reaches itself by pairs of c's edges taken in c's order.
func (g *Graph) rolesHold(c Cycle) bool {
	if len(c) < 2 {
		return false
	}
	steps := make([][]pair, len(c))
	for i, e := range c {
		ps, ok := g.pairsOf(e)
		if !ok {
			return false
		}
		steps[i] = ps
	}
	key := cycleKey(c)
	if _, ok := g.roles[key]; !ok {
		met := false
		for i := range steps {
			if meets(steps[i], steps[(i+1)%len(steps)]) {
				met = true
				break
			}
		}
		if !met {
			return false
		}
		if len(g.roles) < maxRoles {
			if g.roles == nil {
				g.roles = make(map[string]struct{})
			}
			g.roles[key] = struct{}{}
		}
	}
	return !closesOnALock(steps)
}

// pairsOf returns the pairs of the edges from e.From to e.To, both ways
// of acquiring To, and whether they are all known.
func (g *Graph) pairsOf(e *Edge) ([]pair, bool) {
	if g.pairsUnsure {
		return nil, false
	}
	if _, ok := g.lostAt[[2]NodeID{e.From, e.To}]; ok {
		return nil, false
	}
	var ps []pair
	for _, read := range [2]bool{false, true} {
		f := g.edges[edgeKey{e.From, e.To, read}]
		if f == nil {
			continue
		}
		if f.pairsLost {
			return nil, false
		}
		ps = append(ps, f.pairs...)
	}
	return ps, true
}

// meets reports whether a lock is the To of a pair of in and the From of
// a pair of out.
func meets(in, out []pair) bool {
	for _, p := range in {
		for _, q := range out {
			if p.to == q.from {
				return true
			}
		}
	}
	return false
}

// closesOnALock reports whether some lock reaches itself through one pair
// of each step, in order: a cycle of locks along the cycle of classes.
func closesOnALock(steps [][]pair) bool {
	var cur, next []NodeID
	for i, p := range steps[0] {
		if containsFrom(steps[0][:i], p.from) {
			continue // that start was tried
		}
		cur = append(cur[:0], p.from)
		for _, step := range steps {
			next = next[:0]
			for _, q := range step {
				if containsID(cur, q.from) && !containsID(next, q.to) {
					next = append(next, q.to)
				}
			}
			cur, next = next, cur
			if len(cur) == 0 {
				break
			}
		}
		if containsID(cur, p.from) {
			return true
		}
	}
	return false
}

func containsFrom(ps []pair, id NodeID) bool {
	for _, p := range ps {
		if p.from == id {
			return true
		}
	}
	return false
}

func containsID(ids []NodeID, id NodeID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// holdRoles reports whether R26 holds c back, and if so marks its edges,
// so that a change in their pairs searches again through them (Add).
func (g *Graph) holdRoles(c Cycle) bool {
	if !g.rolesHold(c) {
		return false
	}
	for _, e := range c {
		for _, read := range [2]bool{false, true} {
			if f := g.edges[edgeKey{e.From, e.To, read}]; f != nil {
				f.rolesHeld = true
			}
		}
	}
	g.RolesHeld++
	return true
}

// searchPastRoles looks for a cycle through e that R26 does not hold
// back, held being the one the search found first, which it does, and n
// the states that search visited. Every other simple cycle through e
// leaves out an edge of held other than e: it searches again without
// each such edge in turn, and so on from each cycle R26 holds back, so
// that, run to its end, it finds a cycle that can deadlock if there is
// one. Its searches visit at most rolesFactor times n states in all
// (rolesMin at least): past that it returns held, reported as though
// R26 had not held it back. It returns the cycle, or nil, and how many
// states it visited.
func (g *Graph) searchPastRoles(e *Edge, canBlock func(*Edge) bool, bound int, held Cycle, n int) (Cycle, int) {
	budget := min(g.maxSearch(), max(rolesMin, rolesFactor*n))
	used := 0
	type branch struct {
		out   []*Edge // the edges left out
		cycle Cycle   // the cycle R26 held back with them left out
	}
	queue := []branch{{cycle: held}}
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		for _, f := range b.cycle {
			if f == e || slices.Contains(b.out, f) {
				continue
			}
			out := append(slices.Clip(b.out), f)
			without := func(x *Edge) bool {
				return !slices.Contains(out, x) && (canBlock == nil || canBlock(x))
			}
			if used >= budget {
				return held, used
			}
			d, k := g.searchCounted(e, without, bound)
			used += k
			if d == nil {
				continue
			}
			if !g.holdRoles(d) {
				return d, used
			}
			queue = append(queue, branch{out: out, cycle: d})
		}
	}
	return nil, used
}

// rolesMin and rolesFactor make the budget of searchPastRoles, as
// existsMin and existsFactor make R10's.
const (
	rolesMin    = 4096
	rolesFactor = 8
)

// maxLostAt bounds the node pairs LosePairs remembers without an edge:
// past it, no cycle is held back by R26 any more.
const maxLostAt = 4096

// LosePairs says that a sighting of an edge from node from to node to,
// whichever way it acquired to, never reaches the graph while its locks
// may still meet: the pairs of those edges are incomplete for good, now
// or once they exist (R26). It returns the edges a cycle R26 held back
// went through, to search again (Recheck).
func (g *Graph) LosePairs(from, to NodeID) []*Edge {
	if g.pairsUnsure {
		return nil
	}
	var again []*Edge
	for _, read := range [2]bool{false, true} {
		if e := g.edges[edgeKey{from, to, read}]; e != nil {
			if !e.pairsLost {
				e.pairs, e.pairsLost = nil, true
			}
			if e.rolesHeld {
				again = append(again, e)
			}
		}
	}
	if len(g.lostAt) >= maxLostAt {
		return append(again, g.LoseAllPairs()...)
	}
	if g.lostAt == nil {
		g.lostAt = make(map[[2]NodeID]struct{})
	}
	g.lostAt[[2]NodeID{from, to}] = struct{}{}
	return again
}

// LoseAllPairs says that the pairs of every edge are incomplete, now and
// from now on: R26 holds nothing back any more. It returns the edges a
// cycle R26 held back went through, to search again.
func (g *Graph) LoseAllPairs() []*Edge {
	if g.pairsUnsure {
		return nil
	}
	g.pairsUnsure, g.lostAt, g.pairsAt, g.roles = true, nil, nil, nil
	var again []*Edge
	for _, e := range g.edges {
		e.pairs, e.pairsLost = nil, true
		if e.rolesHeld {
			again = append(again, e)
		}
	}
	return again
}
