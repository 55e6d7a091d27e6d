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
)

// In reports whether the caller is in a synctest bubble: there time.Now
// has no monotonic clock reading (the runtime leaves it out).
func In() bool {
	now := time.Now()
	return now == now.Round(0)
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
