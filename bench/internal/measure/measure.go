// Package measure holds the benchmark helpers that do not depend on the
// mutex under test: live-heap and pause measurement, and stack depth.
package measure

import (
	"math"
	"runtime"
	"runtime/metrics"
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

// pauseMetrics are the runtime's histograms of stop-the-world pauses: the
// collector's and every other kind (goroutine dumps among them).
var pauseMetrics = []string{"/sched/pauses/total/gc:seconds", "/sched/pauses/total/other:seconds"}

// Pauses is a reading of the runtime's pause histograms, to compare with a
// later one (MaxPauseSince).
type Pauses []metrics.Sample

// ReadPauses reads the pause histograms now.
func ReadPauses() Pauses {
	s := make([]metrics.Sample, len(pauseMetrics))
	for i, name := range pauseMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	return s
}

// MaxPauseSince returns an upper bound of the longest stop-the-world pause
// since p was read: the upper edge of the highest histogram bucket that
// gained a pause (its lower edge if it is unbounded), 0 if none did.
func MaxPauseSince(p Pauses) time.Duration {
	now := ReadPauses()
	var worst float64
	for i := range now {
		if now[i].Value.Kind() != metrics.KindFloat64Histogram || p[i].Value.Kind() != metrics.KindFloat64Histogram {
			continue
		}
		h, h0 := now[i].Value.Float64Histogram(), p[i].Value.Float64Histogram()
		for j := len(h.Counts) - 1; j >= 0; j-- {
			if h.Counts[j] > h0.Counts[j] {
				edge := h.Buckets[j+1]
				if math.IsInf(edge, 1) {
					edge = h.Buckets[j]
				}
				worst = max(worst, edge)
				break
			}
		}
	}
	return time.Duration(worst * float64(time.Second))
}
