//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// Rule R24 of docs/RULES.md: a lock whose holds were only ever kept
// until their goroutine exited (or handed off), never released by their
// taker with anything taken under them, gates nothing. The exit check takes the
// lock out of every gate and writers' gate, and reports the cycles it held
// back; should another goroutine release that hold later (a hand-off), it
// puts the lock back where nothing narrowed the gate since.

// ungated is, under eng.mu, what R24 took out of gates for each lock
// still reachable (a lock that became garbage is kept for good), for
// regate. At most maxUngated locks; past that, a kept lock is left in its
// gates.
type ungated struct {
	moves   uint64 // the lock's count of holder changes at the exit check
	edges   []ungatedEdge
	classes []ungatedClass
}

type ungatedEdge struct {
	e   *graph.Edge
	was graph.Gate // its gate as R24 left it
}

type ungatedClass struct {
	c   *class.Class
	was graph.Gate // its writers' gate as R24 left it
}

const (
	maxUngated      = 1024 // locks R24 may have taken out of gates at once
	maxUngatedEdges = 4096 // edges one lock is put back into
)

// ungatedN is len(eng.ungated): handedOff looks only when it is not 0.
var ungatedN atomic.Int32

// keptGate reports whether e, a hold of goroutine gid, which has exited,
// is one R24 takes out of gates: a write hold of an exclusive kind whose
// holds another goroutine may release, still gid's, of a lock no hold of
// which, with order edges under it, was ever released by its taker
// (class.Lock.GateShown): every gate holding the lock was seen under a
// hold kept for good, or handed off.
func keptGate(gid int64, e *held.Entry) bool {
	return exclusiveWrite(e) && e.Lock.Kind.WritesHandOff() && e.Lock.Holder() == gid && !e.Lock.GateShown()
}

// ungateKept takes the locks of kept (keptGate's holds) out of every gate
// and writers' gate, and returns the cycles they no longer hold back.
// reachable says which locks can still be released: for those, what was
// changed is recorded for regate.
func ungateKept(kept []held.KeptHold, reachable map[uint64]bool) []Violation {
	if len(kept) == 0 {
		return nil
	}
	eng.mu.Lock()
	var changed []*graph.Edge
	var narrowed []*class.Class
	for _, k := range kept {
		if r, ok := eng.ungated[k.Lock]; ok && r.moves == k.Moves {
			continue // taken out at an earlier check
		}
		record := reachable[k.Lock]
		if record && len(eng.ungated) >= maxUngated {
			continue // the limit: left in its gates
		}
		id := graph.NodeID(k.Lock)
		r := ungated{moves: k.Moves}
		es := eng.graph.Ungate(id)
		changed = append(changed, es...)
		for _, e := range es[:min(len(es), maxUngatedEdges)] {
			r.edges = append(r.edges, ungatedEdge{e, e.Gate})
		}
		for cid, w := range eng.wgates {
			if !w.Has(id) {
				continue
			}
			c := classOf(cid)
			if c == nil {
				continue
			}
			kept := w.Without(id)
			if kept.Len() == 0 {
				c.Ungate() // for good: an ungated class is not gated again
			} else {
				r.classes = append(r.classes, ungatedClass{c, kept})
			}
			setWritersGate(c, kept)
			narrowed = append(narrowed, c)
		}
		if record {
			if eng.ungated == nil {
				eng.ungated = make(map[uint64]ungated)
			}
			eng.ungated[k.Lock] = r
			ungatedN.Store(int32(len(eng.ungated)))
		}
	}
	if len(changed) > 0 || len(narrowed) > 0 {
		chains.Clear() // a chain cached under a kept hold stands for its gate
	}
	var vs []Violation
	for _, e := range changed {
		if cy := eng.graph.Recheck(e, canBlock); cy != nil {
			vs = append(vs, cycleViolation(cy, e.First.Goroutine, stack.ID(e.First.Stack)))
		}
	}
	for _, c := range narrowed {
		vs = append(vs, recheckInto(c, true)...)
	}
	eng.mu.Unlock()
	return vs
}

// regate puts l back into the gates R24 took it out of, l's kept hold
// having been released by another goroutine (handedOff): its later
// holds are holds like any other, and the earlier sightings were under a
// hold that did exclude. A gate narrowed since, or a writers' gate R24
// emptied, stays as it is.
func regate(l *class.Lock) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	r, ok := eng.ungated[l.ID]
	if !ok {
		return
	}
	delete(eng.ungated, l.ID)
	ungatedN.Store(int32(len(eng.ungated)))
	id := graph.NodeID(l.ID)
	for _, x := range r.edges {
		eng.graph.Regate(x.e, x.was, id)
	}
	for _, x := range r.classes {
		if w, ok := eng.wgates[x.c.ID]; ok && w.Equal(x.was) && x.c.Gated() {
			setWritersGate(x.c, w.Union(graph.NewGate([]graph.NodeID{id})))
		}
	}
}

// forgetUngated drops what R24 recorded, with the graph it refers to.
// Called with eng.mu held.
func forgetUngated() {
	eng.ungated = nil
	ungatedN.Store(0)
}

// classOf returns the class whose id is cid, from its graph nodes, or nil
// if it has none. Called with eng.mu held.
func classOf(cid uint64) *class.Class {
	var c *class.Class
	eng.classes.each(cid, func(id graph.NodeID) {
		if c == nil {
			c = eng.nodes[id].cls
		}
	})
	return c
}
