//go:build !syncwatch_off

package lockorder

import (
	"context"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/held"
)

// The acquisition path. Every check-mode acquisition that may block goes
// through these steps, in this order, and only the hand-inlined hot paths
// (Mutex.lockSlow and RWMutex.rlockSlow with nothing held) write them out
// themselves:
//
//  1. begin: the lock's use (its initialisation write, RULES.md R11), then
//     enter: recursion, the chain key, the entry pushed.
//  2. If begin says the chain is new, the caller calls
//     newChain(gs, stack.Capture()) in its own frame, before it can block:
//     each frame fewer is cheaper per new edge (see enter).
//  3. blocked, if the lock is not free: an initialisation write that waits
//     counts (initWaits), then the wait, registered in the wait-for graph.
//  4. acquired: older entries of a lock taken again are dropped, the
//     writer is recorded as the holder (a reader counts its hold), and the
//     hold enters the held profile when it is on.
//  5. gaveUp, for a LockContext that returns an error: waitContext has
//     dropped the entry before its report; no holder was recorded.
//
// A try (TryLock, TryRLock) cannot block: tried records it in one step.

// An acquisition is one check-mode acquisition of the lock whose identity
// is l by the goroutine whose state is gs, under mode word w. It lives in
// its caller's frame.
type acquisition struct {
	gs    *held.G
	l     *class.Lock
	w     uint32
	read  bool // a read lock
	init  bool // l's initialisation write (see use)
	again bool // gs held l already (see enter)
}

// begin records the use of l and enters it, through the mutex m. It
// reports whether the chain is new: the caller must then call
// newChain(a.gs, stack.Capture()) before it can block.
func (a *acquisition) begin(m owner) (fresh bool) {
	a.init = use(a.gs, a.l, a.read)
	return a.enter(m)
}

// enter is begin for an acquisition whose use is recorded already
// (RLock's slow half) or that has none (a wait on a Once or a WaitGroup).
func (a *acquisition) enter(m owner) (fresh bool) {
	a.l, a.again, fresh = enter(a.gs, m, a.l, a.read, a.init)
	return fresh
}

// blocked is called when the lock is not free, before the wait.
func (a *acquisition) blocked() {
	if a.init {
		initWaits(a.gs, a.l)
	}
}

// wait waits for lk, the lock not free.
func (a *acquisition) wait(lk locker) {
	a.blocked()
	checkWait(a.gs, a.l, a.read, lk)
}

// waitContext waits for lk, the lock not free, until ctx is done. If it
// gives up it returns the error, with nothing of the acquisition left.
func (a *acquisition) waitContext(ctx context.Context, lk cancelLocker) error {
	a.blocked()
	if err := waitContext(ctx, a.gs, a.l, a.read, lk); err != nil {
		a.gaveUp()
		return err
	}
	return nil
}

// gaveUp is called when a LockContext or RLockContext gave up: waitContext
// has dropped its entry, before any handler ran. A write that waited over
// a read hold of its own holds its report back (see gaveUpOverRead).
func (a *acquisition) gaveUp() {
	if a.again && !a.read {
		gaveUpOverRead(a.gs, a.l)
	}
}

// acquired is called once the lock is held. skip is what the caller
// would pass to noteHold (skipFromMethod, skipFromSlowHalf).
func (a *acquisition) acquired(skip int) {
	if a.read {
		if a.gs.HasPending() {
			a.gs.TookRead(a.l) // one more own hold to release (see held.Pending)
		}
	} else {
		if a.again {
			reacquired(a.gs, a.l)
		}
		holds(a.gs, a.l)
	}
	if a.w&profileBit != 0 {
		noteHold(a.gs, a.l, skip+1) // one frame more: this one
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
