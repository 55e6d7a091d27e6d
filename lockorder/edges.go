//go:build !syncwatch_off

package lockorder

import (
	"maps"
	"runtime"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// The slow path of the engine: recording new order edges, finding the
// cycles they close, and dropping the nodes of dead locks.

// recordEdges adds an edge from every lock gs holds to e's lock, taken at
// stack st, and reports the cycles they close. It runs once per new lock
// chain.
func recordEdges(gs *held.G, e held.Entry, st stack.ID) {
	now := time.Now()
	var found []graph.Cycle
	eng.mu.Lock()
	ents := gs.Entries()
	writers := gate(ents, e.Lock)
	for i := range ents {
		h := &ents[i]
		if h.Lock == e.Lock {
			continue
		}
		same := h.Lock.Class == e.Lock.Class
		from, to := node(h.Lock, same), node(e.Lock, same)
		if from == to {
			continue
		}
		o := graph.Observation{
			Gate:      writers.Without(graph.NodeID(h.Lock.ID)),
			FromRead:  h.Read,
			ToRead:    e.Read,
			Goroutine: gs.ID(),
			Stack:     uint32(st),
			Time:      now,
		}
		if _, _, c := eng.graph.Add(from, to, o, canBlock); c != nil {
			found = append(found, c)
		}
	}
	chains.Add(e.Chain)
	vs := make([]Violation, 0, len(found))
	for _, c := range found {
		vs = append(vs, cycleViolation(c, gs.ID(), st))
	}
	eng.mu.Unlock()
	for _, v := range vs {
		publish(v)
	}
}

// firstWrite marks c as having writers. Read acquisitions of c can block
// from now on, so read-only cycles through c that were harmless may now
// deadlock: look for them again.
func firstWrite(c *class.Class) {
	if !c.MarkWritten() {
		return
	}
	var vs []Violation
	eng.mu.Lock()
	if eng.graph.Cyclic() {
		for id, n := range eng.nodes {
			if n.cls != c {
				continue
			}
			for _, e := range eng.graph.In(id) {
				if c := eng.graph.Recheck(e, canBlock); c != nil {
					vs = append(vs, cycleViolation(c, e.First.Goroutine, stack.ID(e.First.Stack)))
				}
			}
		}
	}
	eng.mu.Unlock()
	for _, v := range vs {
		publish(v)
	}
}

// gate returns the ids of the locks held for writing other than b. The
// gate of an edge a->b is gate(ents, b).Without(a): the locks that
// serialize every goroutine taking the edge. Computed once for all the
// edges into b, and shared by their gates, it keeps a new lock taken under
// k others at O(k log k), where a gate per edge cost O(k² log k).
func gate(ents []held.Entry, b *class.Lock) graph.Gate {
	var ids []graph.NodeID
	for i := range ents {
		if h := &ents[i]; !h.Read && h.Lock != b {
			ids = append(ids, graph.NodeID(h.Lock.ID))
		}
	}
	return graph.NewGate(ids)
}

// canBlock reports whether the acquisition along e can block: a write
// acquisition always can; a read acquisition only if the lock has writers,
// since Go's RWMutex blocks new readers behind a waiting writer.
func canBlock(e *graph.Edge) bool {
	if e.ToWrite {
		return true
	}
	n, ok := eng.nodes[e.To]
	return !ok || n.cls.Written()
}

// node returns l's graph node, its instance node when instance is set,
// creating it. Called with eng.mu held.
func node(l *class.Lock, instance bool) graph.NodeID {
	id := graph.NodeID(l.Class.ID)
	if instance {
		id = graph.NodeID(l.ID)
	}
	if eng.nodes == nil {
		eng.nodes = make(map[graph.NodeID]nodeInfo)
	}
	if _, ok := eng.nodes[id]; !ok {
		eng.nodes[id] = nodeInfo{cls: l.Class, label: l.Label(), id: uint64(id), instance: instance}
		eng.peak = max(eng.peak, len(eng.nodes))
		eng.graph.Node(id, "")
		if !instance {
			// What the graph learns of a named class must outlive its
			// locks, for the next lock of that name to find.
			class.Keep(l.Class)
		}
		if (instance || !l.Class.Named) && l.Track() {
			// Drop the lock's nodes when it becomes unreachable, so that
			// programs creating many short-lived locks stay bounded.
			runtime.AddCleanup(l, forget, [2]graph.NodeID{graph.NodeID(l.ID), graph.NodeID(l.Class.ID)})
		}
	}
	return id
}

// forget removes a dead lock's nodes. A named class's node is removed
// only when the class is freed (forgetClass).
func forget(ids [2]graph.NodeID) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	for _, id := range ids {
		if n, ok := eng.nodes[id]; ok && (graph.NodeID(n.cls.ID) != id || !n.cls.Named) {
			eng.graph.Remove(id)
			delete(eng.nodes, id)
		}
	}
	// Go maps keep their peak size: rebuild once most nodes are gone.
	if eng.peak >= 4096 && len(eng.nodes) <= eng.peak/4 {
		nodes := make(map[graph.NodeID]nodeInfo, len(eng.nodes))
		maps.Copy(nodes, eng.nodes)
		eng.nodes, eng.peak = nodes, len(nodes)
	}
}

// forgetClass removes the node of a named class that no lock of is alive,
// freed for want of room among the dormant classes (class.Forget).
func forgetClass(c *class.Class) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	id := graph.NodeID(c.ID)
	if n, ok := eng.nodes[id]; ok && n.cls == c {
		eng.graph.Remove(id)
		delete(eng.nodes, id)
	}
}

// resetEngine forgets the graph and the chain cache, and with them the
// named classes no lock of is alive.
func resetEngine() {
	eng.mu.Lock()
	for id, n := range eng.nodes {
		if graph.NodeID(n.cls.ID) == id {
			class.Unkeep(n.cls)
		}
	}
	eng.graph.Reset()
	eng.nodes, eng.peak = nil, 0
	chains.Clear()
	eng.mu.Unlock()
}
