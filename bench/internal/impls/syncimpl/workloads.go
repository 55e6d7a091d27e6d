// The workloads' single source: edit here, then go generate in ../.

package syncimpl

import (
	"sync"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/bench/internal/measure"
)

// syncimpl/workloads.go is the single source of the workloads: the other
// implementations' packages hold generated copies of it (see package
// impls). Each workload does its setup before b.Loop starts the timer, so
// an op is exactly the lock work described.

// Uncontended is case (a): one Lock/Unlock pair per op on a mutex no one
// else uses.
func Uncontended(b *testing.B) {
	b.ReportAllocs()
	var mu Mutex
	for b.Loop() {
		mu.Lock()
		mu.Unlock()
	}
}

// NestedPair is case (b): lock A, then B while holding A, unlock both.
func NestedPair(b *testing.B) {
	b.ReportAllocs()
	var outer, inner Mutex
	for b.Loop() {
		outer.Lock()
		inner.Lock()
		inner.Unlock()
		outer.Unlock()
	}
}

// Nested4 is case (c): four locks taken in order, released in reverse.
func Nested4(b *testing.B) {
	b.ReportAllocs()
	var m1, m2, m3, m4 Mutex
	for b.Loop() {
		m1.Lock()
		m2.Lock()
		m3.Lock()
		m4.Lock()
		m4.Unlock()
		m3.Unlock()
		m2.Unlock()
		m1.Unlock()
	}
}

// RLock is case (d): one RLock/RUnlock pair per op.
func RLock(b *testing.B) {
	b.ReportAllocs()
	var rw RWMutex
	for b.Loop() {
		rw.RLock()
		rw.RUnlock()
	}
}

// SharedParallel is case (e): every goroutine of b.RunParallel locks and
// unlocks one shared mutex.
func SharedParallel(b *testing.B) {
	b.ReportAllocs()
	var mu Mutex
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			mu.Unlock()
		}
	})
}

// RLockParallel is an extra case, not one of the issue's: every goroutine
// of b.RunParallel, four per CPU, read-locks one shared RWMutex. Readers
// never wait for each other, so an instrumented RLock should cost about
// what sync's does here too: a fast path that fails whenever another
// reader holds the lock would show.
func RLockParallel(b *testing.B) {
	b.ReportAllocs()
	var rw RWMutex
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rw.RLock()
			rw.RUnlock()
		}
	})
}

// padded keeps a mutex alone on its cache lines, so that per-goroutine
// mutexes do not slow each other down through false sharing.
type padded struct {
	_  [128]byte
	mu Mutex
	_  [128]byte
}

// PerGoroutine is case (f): every goroutine of b.RunParallel locks and
// unlocks a mutex of its own. Run with -cpu 1,2 to see how it scales.
func PerGoroutine(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		p := new(padded)
		for pb.Next() {
			p.mu.Lock()
			p.mu.Unlock()
		}
	})
}

// HeldElsewhere is case (g): an uncontended Lock/Unlock pair while others
// other goroutines each hold a lock of their own for the whole benchmark.
func HeldElsewhere(b *testing.B, others int) {
	b.ReportAllocs()
	held := make([]Mutex, others)
	var locked, done sync.WaitGroup
	release := make(chan struct{})
	locked.Add(others)
	done.Add(others)
	for i := range held {
		go func() {
			defer done.Done()
			held[i].Lock()
			locked.Done()
			<-release
			held[i].Unlock()
		}()
	}
	locked.Wait()
	var mu Mutex
	for b.Loop() {
		mu.Lock()
		mu.Unlock()
	}
	close(release)
	done.Wait()
}

// DeepStack is case (h): an uncontended Lock/Unlock pair taken depth
// frames below the benchmark function. The frames are added once, before
// the loop, so an op is the lock work alone.
func DeepStack(b *testing.B, depth int) {
	b.ReportAllocs()
	var mu Mutex
	measure.AtDepth(depth, func() {
		for b.Loop() {
			mu.Lock()
			mu.Unlock()
		}
	})
}

// sink makes each churned mutex a heap object, as it is in a program that
// creates mutexes inside the objects they guard.
var sink *Mutex

// Churn is case (i): an op creates n mutexes, each locked and unlocked
// once while a long-lived lock is held, and drops them. It reports the
// live heap growth over the whole benchmark (live-MiB, after forced
// collections that let cleanups run), the time per churned mutex
// (ns/mutex) and n (mutexes).
func Churn(b *testing.B, n int) {
	b.ReportAllocs()
	start := measure.LiveHeap()
	var long Mutex
	for b.Loop() {
		long.Lock()
		for range n {
			m := new(Mutex)
			sink = m
			m.Lock()
			m.Unlock()
		}
		sink = nil
		long.Unlock()
	}
	elapsed := b.Elapsed()
	growth := int64(measure.LiveHeap()) - int64(start)
	b.ReportMetric(float64(growth)/(1<<20), "live-MiB")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*n), "ns/mutex")
	b.ReportMetric(float64(n), "mutexes")
}

// LiveGoroutines is case (k): an op starts n goroutines that are all alive
// at once, each locking a mutex of its own once, then lets them exit and
// waits for them. The mutexes are heap objects made, and locked once,
// before the op: it measures what a goroutine costs, not what a new mutex
// does (case (i)). It reports the time per goroutine (ns/goroutine), the
// longest stop-the-world pause of the run (pause-ms, collections
// included), and the live heap once they are gone (heap-MiB, after
// forced collections).
func LiveGoroutines(b *testing.B, n int) {
	b.ReportAllocs()
	ms := make([]*Mutex, n)
	for i := range ms {
		ms[i] = new(Mutex)
		ms[i].Lock()
		ms[i].Unlock()
	}
	// n goroutines come and go first, so that the runtime's pool of
	// goroutines is as large for every implementation, whichever runs first.
	var warm sync.WaitGroup
	for range n {
		warm.Go(func() {})
	}
	warm.Wait()
	pauses := measure.ReadPauses()
	for b.Loop() {
		var locked, done sync.WaitGroup
		release := make(chan struct{})
		locked.Add(n)
		done.Add(n)
		for _, m := range ms {
			go func() {
				defer done.Done()
				m.Lock()
				m.Unlock()
				locked.Done()
				<-release
			}()
		}
		locked.Wait()
		close(release)
		done.Wait()
	}
	elapsed := b.Elapsed()
	pause := measure.MaxPauseSince(pauses)
	ms = nil
	heap := measure.LiveHeap()
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*n), "ns/goroutine")
	b.ReportMetric(float64(pause.Microseconds())/1000, "pause-ms")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(n), "goroutines")
}

// WaitGroupGo is case (l): an op makes n WaitGroup.Go calls, each starting
// a function that does nothing, and waits for them. It reports the time
// per call (ns/call) and how the cost of a call grows with the calls made
// (growth: the time of the last tenth of the calls over the first
// tenth's; 1 if it is constant).
func WaitGroupGo(b *testing.B, n int) {
	b.ReportAllocs()
	tenth := n / 10
	var first, last time.Duration
	for b.Loop() {
		var wg WaitGroup
		start := time.Now()
		for i := range n {
			switch i {
			case tenth:
				first += time.Since(start)
			case n - tenth:
				start = time.Now()
			}
			wg.Go(func() {})
		}
		last += time.Since(start)
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
	b.ReportMetric(float64(last)/float64(first), "growth")
	b.ReportMetric(float64(n), "calls")
}
