//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/syncword"
)

// The uncontended fast paths. In ModeOff and ModeTrace an uncontended Lock
// or Unlock has nothing to record, so Mutex.Lock and Mutex.Unlock start
// with a small inlinable test that does sync's own compare-and-swap on
// sync's own state word and returns; everything else (ModeCheck, a lock
// that is taken or has waiters) calls the slow half, which uses sync's
// methods. Inlined, the fast path costs what sync's does: without it every
// lockorder call paid for a wrapper call. RWMutex's RLock and RUnlock have
// theirs on a reader count of their own (see readSlow).
//
// fastOff is 0 when the fast paths may run. Its low bit is set unless the
// mode is off or trace and sync's layout is verified; it starts set, so
// nothing takes a fast path before the package is initialized, and
// syncFastPaths keeps it in step with modeWord. Above that bit it counts
// the LockContext calls waiting for a Mutex (ctxWaitBegin): they wait
// beside sync's queue, not in it, so the releases they wait for must take
// the slow half of Unlock, which rings them. It is a plain word read with
// atomic.LoadUint32 because the fast paths must fit the inliner's budget,
// and atomic.Uint32's method costs a few points more.
var fastOff uint32 = fastOffMode

const (
	fastOffMode = 1 // set by syncFastPaths
	fastOffCtx  = 2 // added per waiting LockContext
)

// ctxWaitBegin turns the Mutex fast paths off for a LockContext about to
// wait, and ctxWaitEnd undoes it. A fast Unlock that read fastOff before
// the add may still release without ringing; internal/ctxwait's waiter
// polls until that cannot happen any more (its rule 2).
func ctxWaitBegin() { atomic.AddUint32(&fastOff, fastOffCtx) }

func ctxWaitEnd() { atomic.AddUint32(&fastOff, ^uint32(fastOffCtx-1)) }

// layoutOK says whether sync's layout is the one the fast paths rely on
// (false when they are compiled out: under the race detector). A variable
// initializer, so it is known before any init function can lock.
var layoutOK = syncword.Verify()

// readSlow is RWMutex's fastOff: 0 when RLock and RUnlock may stop after
// their inlined atomic add (ModeOff and ModeTrace), -1 (every bit set) in
// ModeCheck and until the package is initialized. The read fast paths OR it
// into the reader count they get back and test the sign, one test where
// two would not fit the inliner's budget. The reader count is
// internal/rwlock's own, so unlike fastOff it does not depend on sync's
// layout.
var readSlow int64 = -1

// syncFastPaths sets fastOff's low bit and readSlow from modeWord's mode and
// layoutOK. It rereads modeWord after the stores, so that of two racing
// changes the later one decides.
func syncFastPaths() {
	for {
		w := modeWord.Load()
		off := !layoutOK
		var slow int64
		if Mode(w&modeMask) == ModeCheck {
			off, slow = true, -1
		}
		if off {
			atomic.OrUint32(&fastOff, fastOffMode)
		} else {
			atomic.AndUint32(&fastOff, ^uint32(fastOffMode))
		}
		atomic.StoreInt64(&readSlow, slow)
		if modeWord.Load() == w {
			return
		}
	}
}
