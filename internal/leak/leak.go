// Package leak asks the runtime which goroutines are blocked for good.
//
// From Go 1.27 (and in Go 1.26 built with
// GOEXPERIMENT=goroutineleakprofile) the runtime can run a garbage
// collection that marks every goroutine blocked on a channel or sync
// primitive that no runnable goroutine can reach: such a goroutine can
// never be woken. The mark is permanent, and a goroutine dump shows it in
// the goroutine's header ("goroutine 7 [sync.Mutex.Lock (leaked)]:").
//
// The check proves, it never guesses: a goroutine blocked on a primitive
// that a global variable or a running goroutine can still reach is not
// marked, whether or not anyone will ever wake it. It costs a garbage
// collection cycle, so callers run it on rare events, never on a lock path.
package leak

import (
	"io"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
)

// profileName is the runtime's profile whose writing runs the detection.
const profileName = "goroutineleak"

// mu serialises detections: one garbage collection at a time, however many
// callers ask at once.
var (
	mu    sync.Mutex
	count atomic.Int64
)

// Supported reports whether the runtime can detect leaked goroutines.
func Supported() bool { return pprof.Lookup(profileName) != nil }

// Detect runs the runtime's leak detection, which marks the goroutines
// blocked for good, and reports whether it could. A dump taken after it
// returns shows the marks (see [Marked]).
func Detect() bool {
	p := pprof.Lookup(profileName)
	if p == nil {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	count.Add(1)
	return p.WriteTo(io.Discard, 0) == nil
}

// Count returns how many detections have run, for tests of what runs a
// garbage collection.
func Count() int64 { return count.Load() }

// marker is what a goroutine dump's header adds to a leaked goroutine's
// state.
const marker = " (leaked)"

// Marked reports whether state, a goroutine's state as a dump's header
// shows it ("sync.Mutex.Lock (leaked)"), is that of a goroutine the
// runtime found blocked for good, and returns the state without the mark.
func Marked(state string) (string, bool) {
	return strings.CutSuffix(state, marker)
}
