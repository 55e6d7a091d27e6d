//go:build !syncwatch_off

package lockorder

import (
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// ungateKept takes the locks that dead, holds their goroutines kept until
// they exited, out of every gate and writers' gate, and publishes the
// cycles they no longer hold back (docs/RULES.md R24).
func ungateKept(dead []held.DeadHold) {
	var ids []graph.NodeID
	for i := range dead {
		if h := &dead[i].Entry; exclusiveWrite(h) {
			ids = append(ids, graph.NodeID(h.Lock.ID))
		}
	}
	if len(ids) == 0 {
		return
	}
	eng.mu.Lock()
	var changed []*graph.Edge
	for _, id := range ids {
		changed = append(changed, eng.graph.Ungate(id)...)
	}
	var narrowed []*class.Class
	seen := map[uint64]bool{}
	for _, n := range eng.nodes {
		c := n.cls
		w, ok := eng.wgates[c.ID]
		if !ok || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		kept := w
		for _, id := range ids {
			kept = kept.Without(id)
		}
		if kept.Len() < w.Len() {
			if kept.Len() == 0 {
				c.Ungate()
			}
			setWritersGate(c, kept)
			narrowed = append(narrowed, c)
		}
	}
	var vs []Violation
	if len(changed) > 0 || len(narrowed) > 0 {
		chains.Clear() // a chain cached under a kept hold stands for its gate
	}
	for _, e := range changed {
		if cy := eng.graph.Recheck(e, canBlock); cy != nil {
			vs = append(vs, cycleViolation(cy, e.First.Goroutine, stack.ID(e.First.Stack)))
		}
	}
	for _, c := range narrowed {
		vs = append(vs, recheckInto(c, true)...)
	}
	eng.mu.Unlock()
	for _, v := range vs {
		publish(v)
	}
}
