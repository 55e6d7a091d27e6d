// Package graph is the lock-order graph: nodes are lock classes, an edge
// A->B says "B was acquired while A was held". A cycle is a possible
// deadlock (docs/RULES.md R1). A pair of nodes has up to two edges A->B,
// one per way of acquiring B (R5). Which cycles can deadlock is decided by
// the rules R6 to R10, R18 and R26 (the pairs of locks a class cycle's
// part joined, roles.go), each written down in docs/RULES.md.
//
// Cycle search runs only when an edge is new (or when what is known about an
// existing edge changes). While the graph is acyclic it keeps an incremental
// topological order (Pearce and Kelly, as Abseil's deadlock detector does),
// so a new edge that agrees with the order costs O(1) and one that does not
// searches only the region between its endpoints. Once the graph holds a
// cycle (reported, or made harmless by a gate lock), searches fall back to a
// plain bounded breadth-first search until the cycle is gone.
//
// The graph is not safe for concurrent use; its owner serializes access.
package graph

import (
	"math"
	"slices"
	"time"

	"github.com/syncwatch/syncwatch/internal/hb"
)

// NodeID identifies a node: a lock class, or a single lock instance.
type NodeID uint64

// Observation describes one sighting of From->To: of the edge From->To
// for reading if ToRead, for writing if not.
type Observation struct {
	// Gate holds the nodes held for writing, other than From and To, when
	// the edge was seen. A cycle whose every edge was always seen under one
	// common gate cannot deadlock.
	Gate Gate
	// FromRead is set when From was held for reading.
	FromRead bool
	// ToRead is set when To was being acquired for reading.
	ToRead bool
	// Goroutine, Stack and Time say where the edge was seen. (Stack sits
	// by the flags, in one word: an Edge keeps an Observation.)
	Stack     uint32
	Goroutine int64
	Time      time.Time
	// FromLock is the lock (an id of the space gates use) that held From,
	// or 0 if unknown: an edge taken always from a write hold of one lock
	// knows its goroutine holds that lock (see Edge.Src); one taken always
	// from a hold of one lock, for reading or writing, knows it holds
	// that lock at least for reading (Edge.Hold). The owner leaves it 0
	// for a read hold that may have been handed over (rule R-RW).
	FromLock NodeID
	// RGate holds the locks held for reading, other than From and To,
	// whose read holds cannot have been handed over (rule R-RW).
	RGate Gate
	// Sight is the sighting's goroutine clock (docs/RULES.md R21); its
	// zero value orders nothing.
	Sight hb.Sight
}

// Edge is an order edge with what is known about it: the sightings of
// From->To that acquired To one way, for writing if ToWrite, for reading
// if not. The sightings that acquired it the other way are another Edge,
// with a gate, a Src and a shown sighting of their own (RULES.md R5).
type Edge struct {
	From, To NodeID
	// First is the observation of the edge that reports show, less its
	// gate, which Gate holds: the first, or the latest that made the edge
	// able to block where it could not before (it narrowed the gate, or
	// was taken from a write hold, or from another lock), the one a
	// deadlock along the edge looks like; but never one held under more
	// locks than the one shown, which a reader would see excluded by a
	// common lock from the other edges of the cycle.
	First Observation
	// Gate is the intersection of the gates of every observation.
	Gate Gate
	// ToWrite is set if To is acquired for writing along this edge, and
	// for reading if not (Observation.ToRead); it never changes.
	ToWrite bool
	// FromWrite is set if From was ever held for writing along this edge.
	FromWrite bool
	cyclic    bool
	// shownGate is how many locks First's own gate held.
	shownGate int32
	// Src is the lock every observation held From by, held for writing
	// at each (Observation.FromLock), or 0 if there is no such lock: the
	// edge's goroutine holds Src for writing, as it holds its Gate (see
	// heldBack).
	Src NodeID
	// Hold is the lock every observation held From by, for reading or
	// writing (Observation.FromLock), or 0: the edge's goroutine holds it
	// at least for reading. RGate is the intersection of the
	// observations' read gates. Both serve rule R-RW (see exclusive).
	Hold  NodeID
	RGate Gate
	// Sight is what is known of the goroutines that took the edge and
	// when (Observation.Sight, merged): a cycle through two edges it
	// orders cannot deadlock (docs/RULES.md R21).
	Sight hb.Sight
	// Sightings counts the observations merged into the edge after its
	// first: Regate puts a lock back only into an edge seen no more since.
	Sightings uint32

	// rolesHeld is set once R26 held back a cycle through the edge's
	// part of the graph, so that a change in its pairs of locks searches
	// again (Graph.Sight).
	rolesHeld bool

	from, to      *Node
	outIdx, inIdx int // positions in from.out and to.in
}

// Node is a lock class or instance.
type Node struct {
	ID   NodeID
	Name string
	// Adjacency as slices, in insertion order; an edge knows its index in
	// each, so removal is O(1) and no per-node map is kept.
	out  []*Edge
	in   []*Edge
	rank int
	mark uint64
	via  *Edge // breadth-first search parent
	// writers is the node's writers' gate (see SetWritersGate).
	writers Gate
	// sets are the pair sets of the node (R26), and rolesHeld is set
	// once R26 held back a cycle through its part of the graph.
	sets      map[*pairSet]struct{}
	rolesHeld bool
	solo      bool // a class of one lock (SetSolo)
}

// Graph is a lock-order graph. The zero Graph is empty and ready to use.
type Graph struct {
	nodes      map[NodeID]*Node
	edges      map[edgeKey]*Edge
	nextRank   int
	cyclic     int  // edges inserted while closing a cycle
	ranksValid bool // ranks form a topological order of all edges
	// unranked counts the removals of nodes with such edges since the
	// order was last recomputed (retopo), which costs the whole graph:
	// it is recomputed once they are a quarter of the nodes, so that a
	// graph that stays cyclic while its short-lived locks come and go
	// pays for it by the removal, not by the graph's size per removal.
	unranked int
	// searched counts the nodes or states searches visited since then
	// while the order was not kept: once they match the graph's size,
	// the order is recomputed, since the last cycle may be gone and a
	// graph kept cyclic for want of it searches at every new edge.
	searched int
	retopos  int // orders recomputed, for tests
	epoch    uint64
	peak     int // most nodes ever held since the maps were last rebuilt
	// lists and nextList remember recent intersections of gate lists
	// (see intersect), in a ring.
	lists    [4]listMemo
	nextList int
	// MaxSearch bounds the nodes one search may visit; 0 means 1<<20.
	MaxSearch int
	// gated counts, for each lock, the nodes whose writers' gate holds
	// it: the locks the rule of heldBack can find held. Empty, the rule
	// costs nothing.
	gated map[NodeID]int
	// loose holds the locks whose read holds may have been handed over
	// (see Loosen); rwHeld, for each lock, edges whose cycles rule R-RW
	// held back on it, to search again if it turns loose.
	loose  map[NodeID]struct{}
	rwHeld map[NodeID][]*Edge
	// RolesHeld counts the cycles R26 held back (rolesHold).
	RolesHeld int
	// sets are the pairs of locks sighted, by their nodes; pairsAt
	// files them by lock; metKeys holds the cycles of classes a lock met;
	// pairsUnsure says every pair may be unknown (LoseAllPairs). R26.
	// roles is R26's work once EnableRoles was called, nil before.
	roles       *rolesOps
	sets        map[[2]NodeID]*pairSet
	pairsAt     map[NodeID]map[*pairSet]struct{}
	metKeys     map[string]struct{}
	pairsUnsure bool
}

// edgeKey is an edge's key in Graph.edges: its nodes, and whether To is
// acquired for reading.
type edgeKey struct {
	from, to NodeID
	toRead   bool
}

func (e *Edge) key() edgeKey { return edgeKey{e.From, e.To, !e.ToWrite} }

// Cycle is a list of edges e[0], e[1], ... with e[i].To == e[i+1].From and
// the last edge's To equal to the first edge's From.
type Cycle []*Edge

// Key returns a key that is the same for every rotation of the cycle.
func (c Cycle) Key() []NodeID {
	ids := make([]NodeID, len(c))
	min := 0
	for i, e := range c {
		ids[i] = e.From
		if e.From < ids[min] {
			min = i
		}
	}
	return append(ids[min:], ids[:min]...)
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

// Edges returns the number of edges (up to two per pair of nodes).
func (g *Graph) Edges() int { return len(g.edges) }

// Node returns the node id, creating it with name if it does not exist.
func (g *Graph) Node(id NodeID, name string) *Node {
	if g.nodes == nil {
		g.nodes = make(map[NodeID]*Node)
		g.edges = make(map[edgeKey]*Edge)
		g.ranksValid = true
	}
	n := g.nodes[id]
	if n == nil {
		n = &Node{ID: id, Name: name, rank: g.nextRank}
		g.nextRank++
		g.nodes[id] = n
		g.peak = max(g.peak, len(g.nodes))
	}
	return n
}

// Lookup returns node id, or nil.
func (g *Graph) Lookup(id NodeID) *Node { return g.nodes[id] }

// Edge returns the edge from->to that acquires to for reading if toRead,
// for writing if not, or nil.
func (g *Graph) Edge(from, to NodeID, toRead bool) *Edge {
	return g.edges[edgeKey{from, to, toRead}]
}

// Each calls f for every edge, in no particular order.
func (g *Graph) Each(f func(*Edge)) {
	for _, e := range g.edges {
		f(e)
	}
}

// Add records an observation of from->to, creating nodes (named by the
// caller beforehand with Node, or unnamed) and the edge as needed: the
// edge of o's way of acquiring to (o.ToRead). It returns
// the edge, whether it is new, and a cycle through it that can deadlock, if
// the observation closed one: every edge of the cycle can block (canBlock)
// and the edges' gates (a read-only edge's counted with its To's writers'
// gate where the rule of SetWritersGate allows) have no lock in common,
// and no read edge of it is held back by the rule of heldBack. canBlock
// may be nil.
func (g *Graph) Add(from, to NodeID, o Observation, canBlock func(*Edge) bool) (e *Edge, isNew bool, c Cycle) {
	if from == to {
		return nil, false, nil
	}
	fn, tn := g.Node(from, ""), g.Node(to, "")
	if e = g.edges[edgeKey{from, to, o.ToRead}]; e != nil {
		e.Sightings++
		if !g.merge(e, o) || g.cyclic == 0 {
			return e, false, nil
		}
		// What we know about the edge weakened (a gate or its Src was
		// lost, or it was taken from a write hold) while the graph holds
		// cycles: look again.
		return e, false, g.search(e, canBlock, math.MaxInt)
	}
	e = &Edge{From: from, To: to, First: o, Gate: o.Gate, ToWrite: !o.ToRead, FromWrite: !o.FromRead,
		Hold: o.FromLock, RGate: o.RGate, Sight: o.Sight, shownGate: int32(o.Gate.Len())}
	e.First.Sight = hb.Sight{}
	if !o.FromRead {
		e.Src = o.FromLock
	}
	e.First.Gate, e.First.RGate = Gate{}, Gate{} // a narrower Gate must not keep this one's list
	bound := math.MaxInt
	if g.ranksValid && g.cyclic == 0 {
		if fn.rank > tn.rank && !g.reorder(fn, tn) {
			// The graph was acyclic with a valid order, so every path
			// from tn back to fn stays within ranks up to fn's.
			e.cyclic, bound = true, fn.rank
		}
	} else {
		e.cyclic = true
	}
	closes := len(tn.out) > 0 && len(fn.in) > 0
	g.link(e, fn, tn)
	if !e.cyclic {
		return e, true, nil
	}
	g.cyclic++
	g.ranksValid = false
	if !closes {
		// Nothing leaves its To, or nothing enters its From (a lock
		// taken for the first time, a new object's): it closes no
		// cycle, and needs no search. A cycle through it later is
		// closed, and searched, by a later edge. It counts in
		// g.cyclic all the same, so that the order comes back (retopo)
		// once the edges that were added without it are gone.
		return e, true, nil
	}
	return e, true, g.search(e, canBlock, bound)
}

func (g *Graph) link(e *Edge, fn, tn *Node) {
	e.from, e.to = fn, tn
	e.outIdx, e.inIdx = len(fn.out), len(tn.in)
	fn.out = append(fn.out, e)
	tn.in = append(tn.in, e)
	g.edges[e.key()] = e
}

// unlink removes e from its nodes' adjacency and the edge map.
func (g *Graph) unlink(e *Edge) {
	out := e.from.out
	last := len(out) - 1
	out[e.outIdx] = out[last]
	out[e.outIdx].outIdx = e.outIdx
	out[last] = nil
	e.from.out = out[:last]

	in := e.to.in
	last = len(in) - 1
	in[e.inIdx] = in[last]
	in[e.inIdx].inIdx = e.inIdx
	in[last] = nil
	e.to.in = in[:last]

	delete(g.edges, e.key())
	if e.cyclic {
		g.cyclic--
	}
}

// merge folds o, a sighting of e's way of acquiring To, into e and
// reports whether e can now take part in a cycle it could not before.
func (g *Graph) merge(e *Edge, o Observation) bool {
	changed := false
	if !o.FromRead && !e.FromWrite {
		e.FromWrite, changed = true, true
	}
	if e.Src != 0 && (o.FromRead || o.FromLock != e.Src) {
		// heldBack looks at Src (the pair rule, and the ∃ rule for the
		// locks of g.gated).
		e.Src, changed = 0, true
	}
	if kept := g.intersect(e.Gate, o.Gate); kept.Len() < e.Gate.Len() {
		e.Gate, changed = kept, true
	}
	if e.Hold != 0 && o.FromLock != e.Hold {
		e.Hold, changed = 0, true
	}
	if kept := e.RGate.Intersect(o.RGate); kept.Len() < e.RGate.Len() {
		e.RGate, changed = kept, true
	}
	if changed && o.Gate.Len() <= int(e.shownGate) {
		// o is what makes a cycle through e possible now: show it,
		// unless it was taken under more locks than the sighting shown
		// (say, beginning a write under the lock that every write
		// holds), which would look excluded from the cycle's other edges
		// where the one shown is not.
		e.First, e.shownGate = o, int32(o.Gate.Len())
		e.First.Gate, e.First.RGate, e.First.Sight = Gate{}, Gate{}, hb.Sight{}
	}
	// A sighting that orders less than those before it makes no other
	// sighting the one to show, but a cycle R21 held back may now
	// deadlock.
	return e.Sight.Merge(o.Sight) || changed
}

// Cyclic reports whether the graph holds a cycle (possibly a harmless one).
func (g *Graph) Cyclic() bool { return g.cyclic > 0 }

// In returns the edges into node id, in no particular order.
func (g *Graph) In(id NodeID) []*Edge {
	n := g.nodes[id]
	if n == nil {
		return nil
	}
	return slices.Clone(n.in)
}

// Recheck searches again for a cycle through e that can deadlock, after
// something canBlock depends on changed. It returns nil if the graph is
// acyclic.
func (g *Graph) Recheck(e *Edge, canBlock func(*Edge) bool) Cycle {
	if g.cyclic == 0 {
		return nil
	}
	return g.search(e, canBlock, math.MaxInt)
}

// Remove deletes node id and its edges.
func (g *Graph) Remove(id NodeID) {
	n := g.nodes[id]
	if n == nil {
		return
	}
	hadCyclic := false
	for len(n.out) > 0 {
		e := n.out[len(n.out)-1]
		hadCyclic = hadCyclic || e.cyclic
		g.unlink(e)
	}
	for len(n.in) > 0 {
		e := n.in[len(n.in)-1]
		hadCyclic = hadCyclic || e.cyclic
		g.unlink(e)
	}
	g.countWriters(n.writers, -1)
	if g.roles != nil {
		g.roles.remove(g, n)
	}
	delete(g.nodes, id)
	delete(g.loose, id)
	delete(g.rwHeld, id)
	g.shrink()
	if hadCyclic {
		g.unranked++
		if g.cyclic == 0 || g.unranked*4 >= len(g.nodes) {
			g.retopo()
		}
	}
}

// shrink rebuilds the maps once most of their entries are gone: Go maps
// never give memory back, and a program that churns through short-lived
// locks would otherwise keep the high-water mark forever.
func (g *Graph) shrink() {
	if g.peak < 4096 || len(g.nodes) > g.peak/4 {
		return
	}
	nodes := make(map[NodeID]*Node, len(g.nodes))
	for id, n := range g.nodes {
		nodes[id] = n
		n.out = slices.Clip(n.out)
		n.in = slices.Clip(n.in)
	}
	edges := make(map[edgeKey]*Edge, len(g.edges))
	for k, e := range g.edges {
		edges[k] = e
	}
	g.nodes, g.edges, g.peak = nodes, edges, len(nodes)
}

// Reset empties the graph.
func (g *Graph) Reset() { *g = Graph{MaxSearch: g.MaxSearch, roles: g.roles} }

// SetWritersGate sets the writers' gate of node id, if it exists: locks
// held for writing at every acquisition of id for writing that could
// have queued (empty: none known). The owner keeps it up to date, and
// rechecks the edges into id when it narrows. Rules R7 and R8 of
// docs/RULES.md use it: a search counts a read-only edge p = X->Y as taken
// under p.Gate and Y's writers' gate when the cycle's next edge was only
// ever taken from a read hold of Y, and under p.Gate alone otherwise.
func (g *Graph) SetWritersGate(id NodeID, w Gate) {
	if n := g.nodes[id]; n != nil {
		g.countWriters(n.writers, -1)
		n.writers = w
		g.countWriters(w, +1)
	}
}

// countWriters adds d to the count in g.gated of each lock of w.
func (g *Graph) countWriters(w Gate, d int) {
	if w.Len() == 0 {
		return
	}
	if g.gated == nil {
		g.gated = make(map[NodeID]int)
	}
	for i, id := range w.ids {
		if i+1 == w.skip {
			continue
		}
		if g.gated[id] += d; g.gated[id] <= 0 {
			delete(g.gated, id)
		}
	}
}
