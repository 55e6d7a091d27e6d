//go:build !syncwatch_off

package lockorder

import (
	"slices"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// A Wait on a group no Go'd function has held adds no edge at once (R22):
// the edges it would add, as the acquisition path sees them (gates, the
// R21 sighting), are kept on the group and added when its first Go makes
// it holdable, so that a Go that nothing syncwatch sees orders after the
// Wait (a channel) still closes the cycle. A group that is never Go'd
// drops what it kept with itself.

// maxUnheldWaits bounds the Waits a group keeps (one per goroutine, place
// and holds: a newer one replaces the older); past it, a Wait adds its
// edges at once.
const maxUnheldWaits = 16

// unheldWait is what a Wait on a group not held yet would have added.
type unheldWait struct {
	gid   int64
	st    stack.ID
	obs   []observed
	epoch uint32 // readEpoch when kept: a Reset since forgets it
}

// same reports whether u and v are one goroutine's Waits at one place
// under the same holds.
func (u unheldWait) same(v unheldWait) bool {
	return u.gid == v.gid && u.st == v.st &&
		slices.EqualFunc(u.obs, v.obs, func(a, b observed) bool { return a.from == b.from && a.o.FromRead == b.o.FromRead })
}

// enter is enterBlocking for a Wait by gs on wg, whose identity is l:
// the Wait's entry is pushed, and the edges of a new chain are added at
// once if a Go'd function has held the group, kept for its first Go if
// not.
func (wg *WaitGroup) enter(gs *held.G, l *class.Lock, st stack.ID) {
	if _, fresh := (acquisition{gs: gs, l: l, f: acqUsed}).begin(notCopied{}); !fresh {
		return
	}
	// This Wait's own stack (st, if wg.first took it in this call), not
	// where the group was named: a Wait kept for the first Go is one with
	// the goroutine's later Waits at its place only if their stacks are
	// one (unheldWait.same), so both start at Wait's caller.
	if st == 0 {
		st = stack.CaptureAbove(2) // from Wait's caller, as wg.first's trace
	}
	// As newChain does, with the entry off the stack.
	e := *gs.Top()
	gs.PopUnnoted()
	if gs.Inits {
		nestedUnderInit(gs)
	}
	writtenHolds(gs) // it may publish: not under wg.mu
	switch {
	case !wg.keep(gs, e, st):
		recordEdges(gs, e, st)
	case tooDeep(gs):
		losePairs(gs) // kept nothing (R25): its pairs go unseen (R26)
	default:
		sightOnly(gs, e.Lock) // kept: its pairs count now (R26)
	}
	gs.Push(e)
	markInto(gs, e.Lock)
}

// keep keeps the edges of e, gs's acquisition at stack st, on wg and
// reports true, unless a Go'd function has held the group or wg keeps as
// many Waits as it may: then the caller adds them.
func (wg *WaitGroup) keep(gs *held.G, e held.Entry, st stack.ID) bool {
	wg.mu.Lock()
	defer wg.mu.Unlock()
	if e.Lock.Class.Held() {
		return false
	}
	if tooDeep(gs) {
		return true // nothing to keep (R25)
	}
	obs, proving, _, _ := observe(gs, e, st, time.Now())
	for _, p := range proving {
		if f, _ := p.Locks(); f != nil {
			obs = append(obs, observed{from: f, o: p.Obs}) // added at the first Go, as they stand (RULES.md R22, R23)
		}
	}
	if len(obs) == 0 {
		return true
	}
	u := unheldWait{gid: gs.ID(), st: st, obs: obs, epoch: readEpoch.Load()}
	if i := slices.IndexFunc(wg.unheld, u.same); i >= 0 {
		// The newer sighting (ordered before less), held back only by
		// what held back both.
		old := wg.unheld[i].obs
		for j := range u.obs {
			o, p := &u.obs[j].o, old[j].o
			o.Gate, o.RGate = o.Gate.Intersect(p.Gate), o.RGate.Intersect(p.RGate)
			if p.FromLock == 0 {
				o.FromLock = 0
			}
		}
		wg.unheld[i] = u
		return true
	}
	if len(wg.unheld) >= maxUnheldWaits {
		return false
	}
	wg.unheld = append(wg.unheld, u)
	return true
}

// holdable marks l's class held, for wg's first Go in ModeCheck, and adds
// the edges of the Waits wg kept, reporting the cycles they close.
//
// eng.mu is taken first, so that no edge of a Go'd function, which may
// start as soon as the class is marked, enters the graph before the kept
// ones. (Nothing takes eng.mu under wg.mu.)
func (wg *WaitGroup) holdable(l *class.Lock) {
	eng.mu.Lock()
	wg.mu.Lock()
	l.Class.MarkHeld()
	kept := wg.unheld
	wg.unheld = nil
	wg.mu.Unlock()
	var vs []Violation
	epoch := readEpoch.Load()
	for _, u := range kept {
		if u.epoch != epoch {
			continue // kept before a Reset
		}
		var again []*graph.Edge
		if sight := eng.sightPair; sight != nil {
			for _, ob := range u.obs {
				again = append(again, sight(ob.from, l, ob.o.FromRead)...)
			}
		}
		for _, c := range addObserved(l, u.obs, nil) {
			vs = append(vs, cycleViolation(c, u.gid, u.st))
		}
		vs = recheckRoles(again, u.gid, vs)
	}
	eng.mu.Unlock()
	publishAll(vs)
}
