//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/syncword"
)

// The uncontended fast paths. In ModeOff and ModeTrace an uncontended Lock
// or Unlock has nothing to record, so Lock, Unlock, RLock and RUnlock start
// with a small inlinable test that does sync's own compare-and-swap on
// sync's own state word and returns; everything else (ModeCheck, a lock
// that is taken or has waiters, a writer pending) calls the slow half,
// which uses sync's methods. Inlined, the fast path costs what sync's
// does: without it every lockorder call paid for a wrapper call.
//
// fastOff is 0 when the fast paths may run: mode off or trace, and sync's
// layout verified at init. setMode keeps it in step with modeWord. It is a
// plain word read with atomic.LoadUint32 because the fast paths must fit
// the inliner's budget, and atomic.Uint32's method costs a few points more.
var fastOff uint32

// syncFastPaths sets fastOff from modeWord's mode and slowBit. It rereads
// modeWord after the store, so that of two racing changes the later one
// decides.
func syncFastPaths() {
	for {
		w := modeWord.Load()
		var off uint32
		if w&(3|slowBit) >= uint32(ModeCheck) {
			off = 1
		}
		atomic.StoreUint32(&fastOff, off)
		if modeWord.Load() == w {
			return
		}
	}
}

// init turns the fast paths off for good if sync's layout is not the one
// they rely on (or they are compiled out: under the race detector).
func init() {
	if !syncword.Verify() {
		updateMode(func(w uint32) uint32 { return w | slowBit })
	}
}
