// Package bubble keeps syncwatch's own channels and timers out of
// testing/synctest bubbles.
//
// A channel or timer made by a goroutine in a bubble belongs to it: used
// from outside, it is a fatal error, and a timer made there runs on the
// bubble's fake clock. The wait monitor's timer outlives the wait that
// arms it, so it is made and armed outside any bubble.
package bubble

import (
	"runtime"
	"time"
	"unsafe"
)

// In reports whether the caller is in a synctest bubble: there time.Now
// has no monotonic clock reading (the runtime leaves it out). It reads
// the reading's flag, the top bit of time.Time's first word (hasMonotonic
// in the time package), rather than compare with Round(0), which would
// link time's arithmetic into every program that takes a lock (In is on
// internal/rwlock's paths; lockorder's TestBinarySize bounds the size).
// TestIn holds it to the runtime of each release of Go.
func In() bool {
	now := time.Now()
	return *(*uint64)(unsafe.Pointer(&now))>>63 == 0
}

// Later runs f outside any bubble soon, on the runtime's cleanup goroutine,
// which belongs to no bubble, handed over by a garbage collection, without
// waiting for it. It costs a collection, so callers use it rarely (the
// monitor, the first wait of a bubble after it went idle). f must not
// block.
func Later(f func()) {
	p := new(struct {
		_ *int // a pointer: not a tiny allocation, which is freed late
		_ [8]byte
	})
	runtime.AddCleanup(p, func(f func()) { f() }, f)
	runtime.GC()
}
