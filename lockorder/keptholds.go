//go:build !syncwatch_off

package lockorder

import (
	"slices"
	"weak"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// Rule R24 of docs/RULES.md: a lock whose holds were only ever kept until
// their goroutine exited, never released by their taker with anything
// taken under them nor handed off, gates nothing. The exit check takes the
// lock out of every gate and writers' gate, and reports the cycles it held
// back; should another goroutine release that hold later (a hand-off), it
// puts the lock back into the edges seen no more since.

// ungated is, under eng.mu, what R24 took out of gates for a lock still
// reachable (a lock that became garbage is kept for good), for regate. At
// most maxUngated locks; past that, a kept lock is left in its gates.
type ungated struct {
	lock  weak.Pointer[class.Lock]
	edges []ungatedEdge
}

type ungatedEdge struct {
	e         *graph.Edge
	sightings uint32 // e.Sightings when R24 took the lock out
}

const (
	maxUngated      = 1024 // reachable locks R24 may have taken out of gates at once
	maxUngatedEdges = 1024 // edges one lock is put back into
)

// keptGate reports whether e, a hold of goroutine gid, which has exited,
// is one R24 takes out of gates: a write hold of an exclusive kind whose
// holds another goroutine may release, still gid's, of a lock that no
// release ever showed to gate (class.Lock.Gate.Shown) and that R24 did not
// take out of gates already.
func keptGate(gid int64, e *held.Entry) bool {
	l := e.Lock
	return exclusiveWrite(e) && l.Kind.WritesHandOff() && l.Holder() == gid && !l.Gate.Shown() && !l.Gate.Taken()
}

// watchKept reports whether the grave of e, a hold of goroutine gid,
// which a goroutine dump showed gone, must watch its lock once its
// goroutine's state is freed (held.Bury): should the lock become garbage
// still gid's, the next exit check takes its id out of gates
// (held.KeptHolds). It is a hold R24 takes out of gates (keptGate) of a
// lock that may be in some edge's gate, having had an order edge seen
// under a write hold of it (Gate.Under). Another kept lock that becomes
// garbage is in no gate, and harms no one.
func watchKept(gid int64, e *held.Entry) bool { return keptGate(gid, e) && e.Lock.Gate.Under() }

// ungateKept takes the locks of kept (keptGate's holds) out of every gate
// and writers' gate, and returns the cycles they no longer hold back.
// reachable says which locks can still be released: for those, the edges
// changed are recorded for regate.
func ungateKept(kept []held.KeptHold, reachable map[uint64]bool) []Violation {
	eng.mu.Lock()
	pruneUngated()
	if len(kept) == 0 {
		eng.mu.Unlock()
		return nil
	}
	var changed []*graph.Edge
	var narrowed []*class.Class
	for _, k := range kept {
		l := k.Lock.Value() // nil once collected: then no hand-off can come
		record := l != nil && reachable[k.ID]
		if l != nil {
			// Looked at again under eng.mu: a hand-off since the holds
			// were read shows the lock to gate (handedOff, Gate.Show), and
			// from Gate.Take on, a hand-off finds the record (regate).
			if l.Holder() != k.Goroutine || l.Moves() != k.Moves || (record && len(eng.ungated) >= maxUngated) || !l.Gate.Take() {
				continue
			}
		}
		id := graph.NodeID(k.ID)
		es := eng.graph.Ungate(id)
		changed = append(changed, es...)
		if record {
			r := ungated{lock: k.Lock}
			for _, e := range es[:min(len(es), maxUngatedEdges)] {
				r.edges = append(r.edges, ungatedEdge{e, e.Sightings})
			}
			if eng.ungated == nil {
				eng.ungated = make(map[uint64]ungated)
			}
			eng.ungated[k.ID] = r
		}
		for cid, w := range eng.wgates {
			if !w.Has(id) {
				continue
			}
			if c := classOf(cid); c != nil {
				left := w.Without(id)
				if left.Len() == 0 {
					c.Ungate()
				}
				setWritersGate(c, left)
				narrowed = append(narrowed, c)
			}
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
// having been released by another goroutine (handedOff): the sightings
// under it were under a hold that excluded. Only the edges seen no more
// since get it back; writers' gates do not (a limit of R24).
func regate(l *class.Lock) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	r, ok := eng.ungated[l.ID]
	if !ok {
		return
	}
	delete(eng.ungated, l.ID)
	for _, x := range r.edges {
		eng.graph.Regate(x.e, x.sightings, graph.NodeID(l.ID))
	}
}

// pruneUngated drops the records of locks collected since, for which no
// hand-off can come, and the edges that left the graph from the others.
// Called with eng.mu held.
func pruneUngated() {
	for id, r := range eng.ungated {
		if r.lock.Value() == nil {
			delete(eng.ungated, id)
			continue
		}
		if left := slices.DeleteFunc(r.edges, func(x ungatedEdge) bool { return !eng.graph.Holds(x.e) }); len(left) < len(r.edges) {
			r.edges = slices.Clip(left)
			eng.ungated[id] = r
		}
	}
}

// forgetUngated drops what R24 recorded, with the graph it refers to.
// Called with eng.mu held.
func forgetUngated() { eng.ungated = nil }

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
