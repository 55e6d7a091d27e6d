// Package bubble keeps syncwatch's own channels and timers out of
// testing/synctest bubbles.
//
// A channel or timer made by a goroutine in a bubble belongs to it: used
// from outside, it is a fatal error, and a timer made there runs on the
// bubble's fake clock. syncwatch makes some of its state lazily, on the
// first contention or the first wait, whichever goroutine that is; state
// that outlives the operation (a lock's wait queues, the wait monitor's
// timer) must be made outside any bubble.
package bubble

import (
	"runtime"
	"sync"
	"time"
)

// In reports whether the caller is in a synctest bubble: there time.Now
// has no monotonic clock reading (the runtime leaves it out).
func In() bool {
	now := time.Now()
	return now == now.Round(0)
}

// Outside runs f outside any bubble, and returns once it has run: at once
// if the caller is in none, else on the runtime's cleanup goroutine, which
// belongs to no bubble, handed over by a garbage collection. It costs a
// collection, so callers use it once per object, for state they keep.
// f must not block.
func Outside(f func()) {
	if !In() {
		f()
		return
	}
	var ran sync.Mutex // sync's locks belong to no bubble
	ran.Lock()
	Later(func() {
		f()
		ran.Unlock()
	})
	for !ran.TryLock() {
		// The collection found the object garbage, and the cleanup goroutine
		// runs f soon; or it did not (it was still in a register): another.
		runtime.GC()
		runtime.Gosched()
	}
}

// Later runs f outside any bubble soon, on the runtime's cleanup goroutine,
// without waiting for it; see Outside. f must not block.
func Later(f func()) {
	p := new(struct {
		_ *int // a pointer: not a tiny allocation, which is freed late
		_ [8]byte
	})
	runtime.AddCleanup(p, func(f func()) { f() }, f)
	runtime.GC()
}
