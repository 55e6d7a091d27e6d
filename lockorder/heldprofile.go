//go:build !syncwatch_off

package lockorder

import (
	"os"
	"runtime/pprof"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/held"
)

// heldProfile is the runtime/pprof profile named HeldProfileName: one entry
// per goroutine blocked on a contended lock in ModeCheck, keyed by the
// goroutine's state (a goroutine waits for one lock at a time).
var heldProfile = pprof.NewProfile(HeldProfileName)

// heldProfileOn turns the held profile's bookkeeping on (WithHeldProfile,
// or SYNCWATCH_HELD_PROFILE=1 at start-up). It is off by default: each
// entry costs a stack capture, too much for every contended wait of a
// program that is not being investigated.
var heldProfileOn atomic.Bool

func init() {
	if os.Getenv("SYNCWATCH_HELD_PROFILE") == "1" {
		heldProfileOn.Store(true)
	}
}

// beginWaitNote records in the held profile that gs's goroutine, the
// caller, is about to block on a contended lock, with its current stack.
// It must be paired with endWaitNote once the lock is acquired. It is
// called only on the contended path, after the spin.
func beginWaitNote(gs *held.G) {
	// Add passes skip+1 to runtime.Callers, whose frame 0 is Callers
	// itself: skip=1 would start the stack here, 2 starts it at the wait
	// function that called us.
	heldProfile.Add(gs, 2)
}

// endWaitNote removes the entry of beginWaitNote.
func endWaitNote(gs *held.G) { heldProfile.Remove(gs) }

func setHeldProfile(on bool) { heldProfileOn.Store(on) }
