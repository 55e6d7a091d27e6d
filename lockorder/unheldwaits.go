//go:build !syncwatch_off

package lockorder

import (
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// A Wait on a group no Go'd function has held adds no edge at once (R22):
// what it would have added is kept on the group, and added when the
// group's first Go makes it holdable, so that a Go that nothing syncwatch
// sees orders after the Wait (a channel, a race) still closes the cycle.
// A group that is never Go'd drops what it kept with itself.

// maxUnheldWaits bounds the Waits a group keeps: past it, a Wait at a
// place and under holds not kept yet is dropped (a cycle it would have
// closed is missed, never made up).
const maxUnheldWaits = 16

// unheldWait is what a Wait on a group not held yet would have added:
// edges from each of holds into the group, taken at stack st.
type unheldWait struct {
	gid   int64
	holds []unheldHold
	st    stack.ID
	at    time.Time
	epoch uint32 // readEpoch when kept: a Reset since forgets it
}

type unheldHold struct {
	l    *class.Lock
	read bool
}

// keepUnheld keeps, on wg, the edges a Wait by gs would add into l, and
// reports true; it reports false if a Go'd function holds l's class now,
// so that the caller adds them itself.
func (wg *WaitGroup) keepUnheld(gs *held.G, l *class.Lock) bool {
	var holds []unheldHold
	for _, e := range gs.Entries() {
		if e.Lock != l && gs.Valid(&e) {
			holds = append(holds, unheldHold{e.Lock, e.Read})
		}
	}
	wg.mu.Lock()
	defer wg.mu.Unlock()
	if l.Class.Held() {
		return false
	}
	if len(holds) == 0 || len(wg.unheld) >= maxUnheldWaits {
		return true
	}
	wg.unheld = append(wg.unheld, unheldWait{gid: gs.ID(), holds: holds, st: stack.Capture(), at: time.Now(), epoch: readEpoch.Load()})
	return true
}

// holdable marks l's class held, for wg's first Go in ModeCheck, and adds
// the edges of the Waits wg kept, reporting the cycles they close.
func (wg *WaitGroup) holdable(l *class.Lock) {
	wg.mu.Lock()
	l.Class.MarkHeld()
	kept := wg.unheld
	wg.unheld = nil
	wg.mu.Unlock()
	if len(kept) == 0 {
		return
	}
	var vs []Violation
	eng.mu.Lock()
	epoch := readEpoch.Load()
	for _, w := range kept {
		if w.epoch != epoch {
			continue // kept before a Reset
		}
		for _, h := range w.holds {
			same := h.l.Class == l.Class
			from, to := node(h.l, same), node(l, same)
			if from == to {
				continue
			}
			// Nothing that held the edge back when it was seen is known
			// now (gates, clocks): it is added as held back by nothing.
			o := graph.Observation{FromRead: h.read, Goroutine: w.gid, Stack: uint32(w.st), Time: w.at}
			if _, _, c := eng.graph.Add(from, to, o, canBlock); c != nil {
				vs = append(vs, cycleViolation(c, w.gid, w.st))
			}
		}
	}
	eng.mu.Unlock()
	for _, v := range vs {
		publish(v)
	}
}
