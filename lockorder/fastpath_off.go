//go:build syncwatch_off

package lockorder

import (
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/syncword"
)

// fastOff is 0 when Unlock may stop after its inlined compare-and-swap,
// as in the default build (fastpath.go): its low bit is set unless sync's
// layout is verified, and above it it counts the LockContext calls
// waiting for a Mutex, whose releases must take the slow half. Lock needs
// none: it is sync's.
var fastOff uint32 = fastOffAtStart()

// layoutOK says whether the fast path may read sync's state word.
var layoutOK = syncword.Verify()

const (
	fastOffMode = 1 // set while sync's layout is not verified
	fastOffCtx  = 2 // added per waiting LockContext
)

// fastOffAtStart is fastOff's first value: 0 if sync's layout is
// verified.
func fastOffAtStart() uint32 {
	if layoutOK {
		return 0
	}
	return fastOffMode
}

// ctxWaitBegin turns Unlock's fast path off for a LockContext about to
// wait, and ctxWaitEnd undoes it; see fastpath.go.
func ctxWaitBegin() { atomic.AddUint32(&fastOff, fastOffCtx) }

func ctxWaitEnd() { atomic.AddUint32(&fastOff, ^uint32(fastOffCtx-1)) }

// syncFastPaths has nothing to keep in step: this build has no fast paths
// of its own, every method is sync's.
func syncFastPaths() {}
