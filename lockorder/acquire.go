//go:build !syncwatch_off

package lockorder

import (
	"context"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/held"
)

// The acquisition path. Every check-mode acquisition that may block goes
// through these steps, in this order, and only the hand-inlined hot paths
// (Mutex.lockSlow and RWMutex.rlockSlow with nothing held, and
// Mutex.lockSlow under holds whose chain is cached: enterSeen) write them
// out themselves:
//
//  1. begin: the lock's use (its initialisation write, RULES.md R11), then
//     enter: recursion, the chain key, the entry pushed.
//  2. If begin says the chain is new, the caller calls
//     newChain(gs, stack.Capture()) in its own frame, before it can block:
//     each frame fewer is cheaper per new edge (see enter).
//  3. wait (or waitContext), if the lock is not free: an initialisation
//     write that waits counts (initWaits), then the wait, registered in the
//     wait-for graph.
//  4. acquired: older entries of a lock taken again are dropped, the
//     writer is recorded as the holder (a reader counts its hold), and the
//     hold enters the held profile when it is on.
//  5. gave up, for a LockContext that returns an error (waitContext): no
//     entry, no holder, nothing queued.
//
// A try (TryLock, TryRLock) cannot block: tried records it in one step.

// An acquisition is one check-mode acquisition of the lock whose identity
// is l by the goroutine whose state is gs. It is passed and returned by
// value, and has at most four fields: the compiler keeps such a struct in
// registers, and one kept in memory measured slower on the nested Lock.
type acquisition struct {
	gs *held.G
	l  *class.Lock
	// done is the holder l may have once acquired for it to have no more
	// to do: gs's goroutine, or noHolder if it has more (a read lock, a
	// lock taken again, or the held profile on).
	done int64
	f    acqFlags
}

// noHolder is no goroutine's id.
const noHolder = -1

// acqFlags say what an acquisition is and what it found.
type acqFlags uint8

const (
	acqRead    acqFlags = 1 << iota // a read lock
	acqProfile                      // the held profile is on
	acqAgain                        // gs held l already (see enter)
	acqInit                         // l's initialisation write (see use)
	acqUsed                         // the use is recorded already, or there is none (see begin)
)

// acquiring returns gs's acquisition of l under mode word w, for reading
// if read.
func acquiring(gs *held.G, l *class.Lock, w uint32, read bool) acquisition {
	a := acquisition{gs: gs, l: l, done: gs.ID()}
	if read {
		a.f |= acqRead
		a.done = noHolder
	}
	if w&profileBit != 0 {
		a.f |= acqProfile
		a.done = noHolder
	}
	return a
}

// begin records the use of l, unless acqUsed is set (RLock's slow half
// records its own; a wait on a Once or a WaitGroup has none), and enters l
// through the mutex m. It returns the acquisition as it now stands, and
// whether the chain is new: the caller must then call
// newChain(a.gs, stack.Capture()) before it can block.
func (a acquisition) begin(m owner) (_ acquisition, fresh bool) {
	read := a.f&acqRead != 0
	if a.f&acqUsed == 0 && use(a.gs, a.l, read) {
		a.f |= acqInit
	}
	var again bool
	a.l, again, fresh = enter(a.gs, m, a.l, read, a.f&acqInit != 0)
	if again {
		a.f |= acqAgain
		a.done = noHolder
	}
	return a, fresh
}

// wait waits for lk, the lock not free: an initialisation write that
// waits counts (initWaits), then the wait is made and registered.
func (a acquisition) wait(lk locker) {
	if a.f&acqInit != 0 {
		initWaits(a.gs, a.l)
	}
	checkWait(a.gs, a.l, a.f&acqRead != 0, lk)
}

// waitContext waits for lk, the lock not free, until ctx is done, as wait
// does. If it gives up it returns the error, with nothing of the
// acquisition left: waitContext has dropped the entry before any handler
// ran, and no holder was recorded. A write that waited over a read hold
// of its own holds its report back (see gaveUpOverRead).
func (a acquisition) waitContext(ctx context.Context, lk cancelLocker) error {
	if a.f&acqInit != 0 {
		initWaits(a.gs, a.l)
	}
	err := waitContext(ctx, a.gs, a.l, a.f&acqRead != 0, lk)
	if err != nil && a.f&(acqAgain|acqRead) == acqAgain {
		gaveUpOverRead(a.gs, a.l)
	}
	return err
}

// acquired is called once the lock is held. skip is what the caller
// would pass to noteHold (skipFromMethod, skipFromSlowHalf). It is small
// enough to inline: a write lock whose holder is the caller already (a
// lock its goroutine takes again and again) costs a load.
func (a acquisition) acquired(skip int) {
	if a.l.Holder() != a.done {
		a.acquiredSlow(skip)
	}
}

// acquiredSlow is acquired's rare half.
func (a acquisition) acquiredSlow(skip int) {
	gs, l, f := a.gs, a.l, a.f
	if f&acqRead != 0 {
		if gs.HasPending() {
			gs.TookRead(l) // one more own hold to release (see held.Pending)
		}
	} else {
		if f&acqAgain != 0 {
			reacquired(gs, l)
		}
		holds(gs, l)
	}
	if f&acqProfile != 0 {
		noteHold(gs, l, skip+2) // two frames more: acquired's (inlined or not) and this one
	}
}

// tried records a successful TryLock or TryRLock of l, in ModeCheck (w):
// it adds no edge into l (RULES.md R3).
func tried(w uint32, l *class.Lock, read bool) {
	gs := current(w)
	tryAcquired(gs, l, read, use(gs, l, read))
	if w&profileBit != 0 {
		noteHold(gs, l, skipFromMethod+1) // one frame more: this one
	}
}
