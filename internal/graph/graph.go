// Package graph is the lock-order graph: nodes are lock classes, an edge
// A->B says "B was acquired while A was held". A cycle is a possible
// deadlock.
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
	"slices"
	"time"
)

// NodeID identifies a node: a lock class, or a single lock instance.
type NodeID uint64

// Observation describes one sighting of an edge From->To.
type Observation struct {
	// Gate lists the nodes held for writing, other than From and To, when
	// the edge was seen, sorted. A cycle whose every edge was always seen
	// under one common gate cannot deadlock.
	Gate []NodeID
	// FromRead is set when From was held for reading.
	FromRead bool
	// ToRead is set when To was being acquired for reading.
	ToRead bool
	// Goroutine, Stack and Time say where the edge was seen.
	Goroutine int64
	Stack     uint32
	Time      time.Time
}

// Edge is an order edge with what is known about it.
type Edge struct {
	From, To NodeID
	// First is the first observation of the edge.
	First Observation
	// Gate is the intersection of the gates of every observation.
	Gate []NodeID
	// ToWrite is set if To was ever acquired for writing along this edge;
	// ToReadSeen if it was ever acquired for reading.
	ToWrite, ToReadSeen bool
	// FromWrite is set if From was ever held for writing along this edge.
	FromWrite bool
	cyclic    bool
}

// Node is a lock class or instance.
type Node struct {
	ID   NodeID
	Name string
	out  map[NodeID]*Edge
	in   map[NodeID]*Edge
	rank int
	mark uint64
}

// Graph is a lock-order graph. The zero Graph is empty and ready to use.
type Graph struct {
	nodes      map[NodeID]*Node
	nextRank   int
	cyclic     int  // edges inserted while closing a cycle
	ranksValid bool // ranks form a topological order of all edges
	epoch      uint64
	edges      int
	// MaxSearch bounds the nodes one search may visit; 0 means 1<<20.
	MaxSearch int
}

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

// Edges returns the number of edges.
func (g *Graph) Edges() int { return g.edges }

// Node returns the node id, creating it with name if it does not exist.
func (g *Graph) Node(id NodeID, name string) *Node {
	if g.nodes == nil {
		g.nodes = make(map[NodeID]*Node)
		g.ranksValid = true
	}
	n := g.nodes[id]
	if n == nil {
		n = &Node{ID: id, Name: name, rank: g.nextRank}
		g.nextRank++
		g.nodes[id] = n
	}
	return n
}

// Lookup returns node id, or nil.
func (g *Graph) Lookup(id NodeID) *Node { return g.nodes[id] }

// Edge returns the edge from->to, or nil.
func (g *Graph) Edge(from, to NodeID) *Edge {
	if n := g.nodes[from]; n != nil {
		return n.out[to]
	}
	return nil
}

// Each calls f for every edge, in no particular order.
func (g *Graph) Each(f func(*Edge)) {
	for _, n := range g.nodes {
		for _, e := range n.out {
			f(e)
		}
	}
}

// Add records an observation of from->to, creating nodes (named by the
// caller beforehand with Node, or unnamed) and the edge as needed. It returns
// the edge, whether it is new, and a cycle through it that can deadlock, if
// the observation closed one: every edge of the cycle can block (canBlock)
// and the edges' gates have no lock in common. canBlock may be nil.
func (g *Graph) Add(from, to NodeID, o Observation, canBlock func(*Edge) bool) (e *Edge, isNew bool, c Cycle) {
	if from == to {
		return nil, false, nil
	}
	fn, tn := g.Node(from, ""), g.Node(to, "")
	if e = fn.out[to]; e != nil {
		if !g.merge(e, o) || g.cyclic == 0 {
			return e, false, nil
		}
		// What we know about the edge weakened (a gate was lost, or a new
		// way to block appeared) while the graph holds cycles: look again.
		return e, false, g.search(e, canBlock)
	}
	e = &Edge{From: from, To: to, First: o, Gate: slices.Clone(o.Gate)}
	g.mergeModes(e, o)
	if g.ranksValid && g.cyclic == 0 {
		if fn.rank > tn.rank && !g.reorder(fn, tn) {
			e.cyclic = true
		}
	} else {
		e.cyclic = true
	}
	g.link(e, fn, tn)
	if !e.cyclic {
		return e, true, nil
	}
	g.cyclic++
	g.ranksValid = false
	return e, true, g.search(e, canBlock)
}

func (g *Graph) link(e *Edge, fn, tn *Node) {
	if fn.out == nil {
		fn.out = make(map[NodeID]*Edge)
	}
	if tn.in == nil {
		tn.in = make(map[NodeID]*Edge)
	}
	fn.out[tn.ID] = e
	tn.in[fn.ID] = e
	g.edges++
}

// merge folds o into e and reports whether e can now take part in a cycle
// it could not before.
func (g *Graph) merge(e *Edge, o Observation) bool {
	changed := g.mergeModes(e, o)
	if len(e.Gate) > 0 {
		kept := e.Gate[:0]
		for _, id := range e.Gate {
			if _, ok := slices.BinarySearch(o.Gate, id); ok {
				kept = append(kept, id)
			}
		}
		if len(kept) < len(e.Gate) {
			changed = true
		}
		e.Gate = kept
	}
	return changed
}

func (g *Graph) mergeModes(e *Edge, o Observation) bool {
	changed := false
	if !o.ToRead && !e.ToWrite {
		e.ToWrite, changed = true, true
	}
	if o.ToRead && !e.ToReadSeen {
		e.ToReadSeen, changed = true, true
	}
	if !o.FromRead && !e.FromWrite {
		e.FromWrite, changed = true, true
	}
	return changed
}

// Cyclic reports whether the graph holds a cycle (possibly a harmless one).
func (g *Graph) Cyclic() bool { return g.cyclic > 0 }

// In returns the edges into node id, in no particular order.
func (g *Graph) In(id NodeID) []*Edge {
	n := g.nodes[id]
	if n == nil {
		return nil
	}
	out := make([]*Edge, 0, len(n.in))
	for _, e := range n.in {
		out = append(out, e)
	}
	return out
}

// Recheck searches again for a cycle through e that can deadlock, after
// something canBlock depends on changed. It returns nil if the graph is
// acyclic.
func (g *Graph) Recheck(e *Edge, canBlock func(*Edge) bool) Cycle {
	if g.cyclic == 0 {
		return nil
	}
	return g.search(e, canBlock)
}

// Remove deletes node id and its edges.
func (g *Graph) Remove(id NodeID) {
	n := g.nodes[id]
	if n == nil {
		return
	}
	hadCyclic := false
	for to, e := range n.out {
		delete(g.nodes[to].in, id)
		hadCyclic = hadCyclic || e.cyclic
		g.drop(e)
	}
	for from, e := range n.in {
		delete(g.nodes[from].out, id)
		hadCyclic = hadCyclic || e.cyclic
		g.drop(e)
	}
	delete(g.nodes, id)
	if hadCyclic {
		g.retopo()
	}
}

func (g *Graph) drop(e *Edge) {
	g.edges--
	if e.cyclic {
		g.cyclic--
	}
}

// Reset empties the graph.
func (g *Graph) Reset() { *g = Graph{MaxSearch: g.MaxSearch} }
