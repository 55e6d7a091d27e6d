//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
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
