//go:build !syncwatch_off

package lockorder

import (
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// The two live runtime/pprof profiles, filled in ModeCheck while the
// profile bit of modeWord is set:
//
//   - heldProfile (HeldProfileName): one entry per lock held right now,
//     with the stack where it was taken, keyed by a token kept in the
//     hold's entry and dropped when the entry leaves the goroutine's stack
//     (released, released by another goroutine, or found stale);
//   - waitingProfile (WaitingProfileName): one entry per goroutine blocked
//     on a contended lock, with the stack where it waits, keyed by the
//     goroutine's state.
var (
	heldProfile    = pprof.NewProfile(HeldProfileName)
	waitingProfile = pprof.NewProfile(WaitingProfileName)
	noteSeq        atomic.Uint64
)

// The profiles' bookkeeping is on while modeWord has profileBit
// (WithHeldProfile, or SYNCWATCH_HELD_PROFILE=1 at start-up: see init in
// config.go). It is off by default: each entry costs a stack capture and
// the profile's lock, too much for every Lock of a program that is not
// being investigated.

// dropNote removes the hold with token n from the held profile; held
// calls it for a hold it forgets.
func dropNote(n uint64) {
	heldProfile.Remove(n)
	holdSites.Delete(n)
}

// holdSites maps the token of each hold in the held profile to where it
// was taken, while it lasts, so that a report of a lock left held by a
// goroutine that exited can say where that goroutine took it.
var holdSites sync.Map // uint64 -> stack.ID

// holdSite returns where the hold with token n was taken, if the held
// profile recorded it.
func holdSite(n uint64) Stack {
	if n == 0 {
		return nil
	}
	if st, ok := holdSites.Load(n); ok {
		return frames(st.(stack.ID))
	}
	return nil
}

// heldAt says where goroutine gid took l, whose hold has token n: where
// the held profile recorded it, or else where l was first taken, which
// is recorded once per lock (class.Lock.First).
func heldAt(gid int64, n uint64, l *class.Lock) string {
	st, what := heldStack(n, l)
	switch what {
	case tookHere:
		return tookAt(gid, st)
	case firstHere:
		return firstTakenAt(gid, st)
	}
	return noPlace
}

// What heldStack found.
const (
	unknownPlace = iota
	tookHere     // where the hold was taken
	firstHere    // where the lock was first taken
)

// heldStack returns where the hold of l with token n was taken, if the
// held profile recorded it (tookHere), or else where l was first taken
// (firstHere).
func heldStack(n uint64, l *class.Lock) (Stack, int) {
	if st := holdSite(n); len(st) > 0 {
		return st, tookHere
	}
	if l != nil && l.First() != 0 {
		if st := frames(stack.ID(l.First())); len(st) > 0 {
			return st, firstHere
		}
	}
	return nil, unknownPlace
}

// The skips noteHold passes to pprof.Profile.Add, so that the held
// profile's stack starts where the user took the lock.
const (
	// skipFromMethod: noteHold is called from the lockorder method the
	// user called (TryLock, LockContext...).
	skipFromMethod = 3
	// skipFromSlowHalf: noteHold is called from the slow half of a method
	// whose fast path was inlined into the user's code (lockSlow,
	// rlockSlow, lockContext): one frame more.
	skipFromSlowHalf = 4
	// skipFromChecked: noteHold is called from the part of a slow half
	// past its common case (rlockChecked): one frame more again.
	skipFromChecked = 5
)

// noteHold enters gs's newest entry, a hold of l that was just acquired,
// in the held profile. skip is passed to pprof.Profile.Add: 3 starts the
// stack at the caller of the lockorder method that calls noteHold, where
// the user took the lock.
func noteHold(gs *held.G, l *class.Lock, skip int) {
	n := noteSeq.Add(1)
	top := gs.Top()
	top.Note = n
	if !top.Read {
		l.SetNote(n)
	}
	heldProfile.Add(n, skip)
	holdSites.Store(n, stack.Capture())
}

// releasedByOther drops the held-profile entry of a write hold of l ended
// by a goroutine other than its holder.
func releasedByOther(l *class.Lock) {
	if n := l.TakeNote(); n != 0 {
		heldProfile.Remove(n)
		holdSites.Delete(n)
	}
}

// beginWaitNote records in the waiting profile that gs's goroutine, the
// caller, is about to block on a contended lock, with its current stack.
// It must be paired with endWaitNote once the lock is acquired. It is
// called only on the contended path, after the spin.
func beginWaitNote(gs *held.G) {
	// Add passes skip+1 to runtime.Callers, whose frame 0 is Callers
	// itself: skip=1 would start the stack here, 2 starts it at the wait
	// function that called us.
	waitingProfile.Add(gs, 2)
}

// endWaitNote removes the entry of beginWaitNote.
func endWaitNote(gs *held.G) { waitingProfile.Remove(gs) }
