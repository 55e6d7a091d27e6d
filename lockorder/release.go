//go:build !syncwatch_off

package lockorder

import (
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
)

// The release side of the engine: popping holds on Unlock and checking
// them for AssertHeld.

// popIfTop pops gs's newest entry if it is a valid write hold of l by
// gs's goroutine, whose id is id: the common Unlock, inlined. The entry
// must carry no Note: a held-profile token, or held's initNote on an
// initialisation write (callers check; those take releaseDeep, which drops
// the token and ends the write).
func popIfTop(gs *held.G, l *class.Lock, id int64) bool {
	if top := gs.Top(); top.Lock == l && !top.Read && l.Holder() == id {
		gs.PopUnnoted()
		return true
	}
	return false
}

// popIfTopRead is popIfTop for a read hold.
func popIfTopRead(gs *held.G, l *class.Lock) bool {
	if top := gs.Top(); top.Lock == l && top.Read && l.ReadGen() == top.Gen {
		gs.PopUnnoted()
		return true
	}
	return false
}

// releaseOwn pops l from the calling goroutine's stack, and rests the
// goroutine's state if it holds nothing more (held.G.Rest). It reports
// false if the goroutine does not hold l: the release is on behalf of
// another goroutine, or a bad unlock. If the release proved edges from
// the hold (R23), it returns the goroutine's state too, not rested: the
// caller passes it to provedWrites once l is unlocked, then rests it.
// inWait is releaseDeep's.
func releaseOwn(w uint32, l *class.Lock, read, inWait bool) (bool, *held.G) {
	id := goid.ID()
	gs := gls.Find(id)
	if gs == nil {
		return false, nil
	}
	if gs.Tag() != w || gs.Len() == 0 {
		return false, nil
	}
	var ok bool
	switch {
	case gs.Top().Note != 0:
		ok = releaseDeep(gs, l, read, inWait)
	case read:
		ok = popIfTopRead(gs, l) || releaseDeep(gs, l, true, inWait)
	default:
		ok = popIfTop(gs, l, id) || releaseDeep(gs, l, false, inWait)
	}
	if gs.HasProved() {
		return ok, gs
	}
	gs.Rest()
	return ok, nil
}

// releaseDeep pops the goroutine's newest hold of l (for reading if read)
// from anywhere in gs's stack, and reports whether it was its own. If
// inWait, the release is a Cond.Wait's: the caller holds l again when the
// Wait returns.
func releaseDeep(gs *held.G, l *class.Lock, read, inWait bool) bool {
	ents := gs.Entries()
	for i := len(ents) - 1; i >= 0; i-- {
		if h := &ents[i]; h.Lock == l && h.Read == read {
			if h.Init {
				l.EndInit() // released, nothing showing l shared yet
			}
			valid := gs.Valid(h)
			gs.Remove(i)
			if valid && gs.HasProving() {
				// The goroutine's own release of its hold: the edges
				// that waited on it are proved (R23), and l is shown to
				// gate what was taken under it (R24). The edges into
				// it, once it holds l no more, are a section ended
				// under their holds, unless a Cond.Wait takes l again.
				if !read && gs.Released(l, readEpoch.Load()) {
					l.Gate.Show()
				}
				if !inWait {
					endedInto(gs, l)
				}
			}
			return valid
		}
	}
	return false
}

// endedInto tells gs, which has just dropped its entry for a hold of l,
// that the hold has ended unless it holds l still (a recursive read): if
// edges into l wait, they are a section's that ended under the holds they
// are from (R23).
func endedInto(gs *held.G, l *class.Lock) {
	if gs.HasProving() && !gs.HoldsValid(l.ID) {
		gs.ReleasedInto(l.ID)
	}
}

// finishRelease adds the edges a release proved (see releaseOwn), once
// the lock is unlocked, and rests gs.
func finishRelease(gs *held.G) {
	provedWrites(gs)
	gs.Rest()
}

// heldBy reports whether gs holds l validly, for writing unless readOK.
func heldBy(gs *held.G, w uint32, l *class.Lock, readOK bool) bool {
	if gs == nil || gs.Tag() != w {
		return false
	}
	ents := gs.Entries()
	for i := len(ents) - 1; i >= 0; i-- {
		if h := &ents[i]; h.Lock == l && (readOK || !h.Read) && gs.Valid(h) {
			return true
		}
	}
	return false
}
