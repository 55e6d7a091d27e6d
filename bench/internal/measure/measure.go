// Package measure holds the benchmark helpers that do not depend on the
// mutex under test: live-heap measurement and stack depth.
package measure

import (
	"runtime"
	"time"
)

// settled is the live-heap change below which LiveHeap considers that
// cleanups have finished freeing memory.
const settled = 64 << 10

// LiveHeap returns the bytes of live heap objects. It collects garbage
// repeatedly, pausing between collections so that cleanups and finalizers
// queued by one collection run and their garbage is freed by the next, until
// the live heap stops shrinking (or after ten rounds).
func LiveHeap() uint64 {
	var ms runtime.MemStats
	var prev int64
	for i := range 10 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		cur := int64(ms.HeapAlloc)
		if i >= 2 && prev-cur < settled {
			break
		}
		prev = cur
		time.Sleep(10 * time.Millisecond)
	}
	return ms.HeapAlloc
}

// AtDepth calls f with depth frames of AtDepth below it (at least one).
//
//go:noinline
func AtDepth(depth int, f func()) {
	if depth <= 1 {
		f()
		return
	}
	AtDepth(depth-1, f)
}
