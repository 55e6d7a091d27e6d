//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

func checkMode(b *testing.B) {
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
	lockorder.Reset()
	b.Cleanup(lockorder.Reset)
}

// Do on a done Once, under a lock, by a goroutine that recorded edges.
func BenchmarkDoneOnceUnderLock(b *testing.B) {
	checkMode(b)
	var o lockorder.Once
	x, y := lockorder.NewMutex("rb-once-x"), lockorder.NewMutex("rb-once-y")
	o.Do(func() { lockAB(x, y) })
	b.ResetTimer()
	for range b.N {
		x.Lock()
		o.Do(func() {})
		x.Unlock()
	}
}

// A producer loop signalling a Cond nobody waits on, holding nested locks.
func BenchmarkCondSignalLoop(b *testing.B) {
	checkMode(b)
	var mu lockorder.Mutex
	c := lockorder.NewCond(&mu)
	x := lockorder.NewMutex("rb-cond-x")
	b.ResetTimer()
	for range b.N {
		x.Lock()
		mu.Lock()
		c.Signal()
		mu.Unlock()
		x.Unlock()
	}
}

// Goroutine per request, nested locks, a WaitGroup per batch.
func BenchmarkGoroutinePerRequest(b *testing.B) {
	checkMode(b)
	x, y := lockorder.NewMutex("rb-req-x"), lockorder.NewMutex("rb-req-y")
	var wg lockorder.WaitGroup
	b.ResetTimer()
	for range b.N {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lockAB(x, y)
		}()
		wg.Wait()
	}
}

// A DAG of n locks that k goroutines each take in every ascending pair:
// each goroutine's first sighting of a chain is recorded (R21: the cache
// names its recorders) and searched from.
func BenchmarkSharedDAG(b *testing.B) {
	const n, k = 100, 16
	for range b.N {
		b.StopTimer()
		checkMode(b)
		ls := make([]*lockorder.Mutex, n)
		for i := range ls {
			ls[i] = lockorder.NewMutex(fmt.Sprintf("rb-dag-%d", i))
		}
		b.StartTimer()
		for range k {
			run(func() {
				for i := range n {
					for j := i + 1; j < n; j++ {
						lockAB(ls[i], ls[j])
					}
				}
			})
		}
	}
}

// A request fanned out to 4 goroutines, with a WaitGroup and a Mutex made
// for it: each new goroutine takes a state, each new lock an identity
// (one stack for its name and first place), each new goroutine's first
// Lock must not grow its stack. Beside sync, from the same run.
func BenchmarkFanOutFreshLocks(b *testing.B) {
	b.Run("impl=sync", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var wg sync.WaitGroup
			var mu sync.Mutex
			n := 0
			for range 4 {
				wg.Go(func() { mu.Lock(); n++; mu.Unlock() })
			}
			wg.Wait()
		}
	})
	b.Run("impl=check", func(b *testing.B) {
		checkMode(b)
		b.ReportAllocs()
		for b.Loop() {
			var wg lockorder.WaitGroup
			var mu lockorder.Mutex
			n := 0
			for range 4 {
				wg.Go(func() { mu.Lock(); n++; mu.Unlock() })
			}
			wg.Wait()
		}
	})
}

// A worker started by WaitGroup.Go waits, per request, for a WaitGroup
// made for it, which another goroutine (a flusher) marks done: each Wait
// is on a group never Go'd (R22), under the worker's hold of its own
// group (R21). Beside sync, from the same run.
func BenchmarkFreshGroupWaitedInGo(b *testing.B) {
	b.Run("impl=sync", func(b *testing.B) {
		reqs := make(chan *sync.WaitGroup)
		go func() {
			for wg := range reqs {
				wg.Done()
			}
		}()
		defer close(reqs)
		var workers sync.WaitGroup
		workers.Go(func() {
			for b.Loop() {
				wg := &sync.WaitGroup{}
				wg.Add(1)
				reqs <- wg
				wg.Wait()
			}
		})
		workers.Wait()
	})
	b.Run("impl=check", func(b *testing.B) {
		checkMode(b)
		reqs := make(chan *lockorder.WaitGroup)
		go func() {
			for wg := range reqs {
				wg.Done()
			}
		}()
		defer close(reqs)
		var workers lockorder.WaitGroup
		workers.Go(func() {
			for b.Loop() {
				wg := &lockorder.WaitGroup{}
				wg.Add(1)
				reqs <- wg
				wg.Wait()
			}
		})
		workers.Wait()
	})
}
