//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/hb"
	"github.com/syncwatch/syncwatch/internal/held"
)

// Rule R21 of docs/RULES.md: the order syncwatch's own synchronisation
// puts between goroutines. A WaitGroup's Done, the end of a function
// started by WaitGroup.Go and a Once's completion release the calling
// goroutine's clock (internal/hb) to the primitive; a Wait that returns
// and a Do that finds the Once done acquire it; WaitGroup.Go starts its
// goroutine knowing what the caller knew (package barrier does the same
// through hb.Fork and hb.Learn). A Cond's wake orders nothing: which
// Signal wakes a waiter, or whether it waits at all, is the scheduler's
// choice. Each order edge keeps what is known of its sightings
// (graph.Edge.Sight), and a cycle through two edges whose sightings that
// order keeps apart is not reported.
//
// The chain cache names the clocks that recorded each chain: another
// goroutine's first sighting of a cached chain is recorded too, as is
// each sighting, at a new epoch, of a goroutine watched for the lock it
// takes.

// clockOf returns gs's clock, making it. Only gs's owner calls it, with gs
// busy.
func clockOf(gs *held.G) *hb.G {
	if gs.HB == nil {
		gs.HB = hb.NewG(gs.ID(), gs.Inherit)
		gs.Inherit = nil
	}
	return gs.HB
}

// cacheKey returns the key under which gs looks up chain k, which ends
// in lock l, and the owner it is cached for when gs finds it: its clock's
// serial, 0 if it has no clock. It starts a new epoch first if gs released
// since its last sighting; a chain into a lock watched in gs's clock is
// salted with the epoch (see hb.G.Watch).
func cacheKey(gs *held.G, k chain.Key, l *class.Lock) (chain.Key, uint64) {
	h := gs.HB
	if h == nil {
		return k, 0
	}
	h.Advance()
	if h.Salts(l.ID, l.Class.ID) {
		k ^= chain.Key(h.Salt)
	}
	return k, h.Serial
}

// seen reports whether chain k into l needs no recording by gs now: it is
// cached, for gs's clock or for several, or its edges from read holds
// wait on gs already, seen at gs's epoch if l is watched (a loop under a
// read hold sees them once).
func seen(gs *held.G, k chain.Key, l *class.Lock) bool {
	// cacheKey, written out: this runs on every nested acquisition.
	var me uint64
	if h := gs.HB; h != nil {
		h.Advance()
		if h.Salts(l.ID, l.Class.ID) {
			k ^= chain.Key(h.Salt)
		}
		me = h.Serial
	}
	return chains.Has(k, me) || gs.Standing(k, readEpoch.Load())
}

// cache adds chain k into l, recorded by gs, to the chain cache.
func cache(gs *held.G, k chain.Key, l *class.Lock) {
	key, me := cacheKey(gs, k, l)
	chains.Add(key, me)
}

// readWaitKey returns the key under which the edges of chain k into l
// from gs's read holds wait on gs (R12), to be cached as they are once
// proved: salted as cacheKey salts it when gs sees them, so that they
// stand for the sightings of that epoch only.
func readWaitKey(gs *held.G, k chain.Key, l *class.Lock) chain.Key {
	key, _ := cacheKey(gs, k, l)
	return key
}

// releaseClock releases the calling goroutine's clock to p, in ModeCheck,
// or what it knows if it has no clock (it recorded no edge).
func releaseClock(p *atomic.Pointer[hb.Clock]) {
	w := modeWord.Load()
	if Mode(w&modeMask) != ModeCheck {
		return
	}
	if id := goid.ID(); !clocked(id) {
		// No state: a goroutine that WaitGroup.Go started still knows
		// what its starter knew (R21).
		if c := inherited(id); c != nil {
			hb.Publish(p, c)
		}
		return
	}
	gs := current(w)
	switch {
	case gs.HB != nil:
		gs.HB.Release(p)
	case gs.Inherit != nil:
		hb.Publish(p, gs.Inherit)
	}
	gs.Rest()
}

// clocked reports whether the calling goroutine, id, has a clock or
// inherited one: in its state, or in the remnant of its state a trim
// dropped while it was idle (current revives it). A goroutine that has
// neither has nothing to publish, and makes no state for it. The one look
// (gls.Own) waits out a trim dropping the state meanwhile: a release that
// found neither would publish nothing, and the edges the goroutine took
// before it would look unordered, a report its lost state made (R17,
// R21).
func clocked(id int64) bool {
	gs, r := gls.Own(id)
	if gs != nil {
		return gs.HB != nil || gs.Inherit != nil
	}
	return r.Clocked()
}

// acquireClock makes the calling goroutine, whose state is gs, busy, know
// what was released to p. The locks it holds now were taken knowing less.
func acquireClock(gs *held.G, p *atomic.Pointer[hb.Clock]) { learn(gs, p.Load()) }

// learn makes gs, busy, know what c knows. A goroutine with no clock that
// holds nothing keeps it in gs.Inherit until it needs a clock: many
// goroutines learn and never record an edge.
func learn(gs *held.G, c *hb.Clock) {
	switch {
	case gs.HB != nil:
		gs.HB.Acquire(c, gs.Len())
	case c == nil:
	case gs.Len() == 0:
		gs.Inherit = hb.Acquired(gs.Inherit, c)
	default:
		clockOf(gs).Acquire(c, gs.Len())
	}
}

// acquireNow is acquireClock for a caller that has no state at hand, in
// ModeCheck.
func acquireNow(p *atomic.Pointer[hb.Clock]) { learnNow(p.Load()) }

// learnNow makes the calling goroutine know what c knows, in ModeCheck.
func learnNow(c *hb.Clock) {
	if c == nil {
		return
	}
	w := modeWord.Load()
	if Mode(w&modeMask) != ModeCheck {
		return
	}
	gs := current(w)
	learn(gs, c)
	gs.Rest()
}

// forkClock returns what a goroutine the caller starts with
// WaitGroup.Go knows, in ModeCheck: nil if the
// caller knows nothing.
func forkClock() *hb.Clock {
	w := modeWord.Load()
	if Mode(w&modeMask) != ModeCheck {
		return nil
	}
	if id := goid.ID(); !clocked(id) {
		return inherited(id) // what WaitGroup.Go gave it, if anything
	}
	gs := current(w)
	c := gs.Inherit
	if gs.HB != nil {
		c = gs.HB.Fork()
	}
	gs.Rest()
	return c
}

// sighting returns the Sight of gs's sighting now of an edge from its
// hold at stack position i.
func sighting(gs *held.G, i int) hb.Sight { return clockOf(gs).Sighting(i) }
