//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Past R23's bound, an acquisition pushed out is taken for a nesting (its
// edges added as proved) only while its goroutine holds its lock as its
// own, and has not released it since but in a Cond.Wait. These are
// releases that do not end the section (for those that do, see
// keptforgood_test.go).
// A lock-all deeper than held.MaxProving (a nesting: its pushed-out edges
// are added as proved) in which the goroutine waits on shard k's Cond
// while the shards before it are held. The Wait releases the shard and
// takes it again: the section under it goes on, and its edges, pushed
// out, are added as a nesting's, closing the true cycle with another
// goroutine's "shard k, then shard 0". (An Unlock and a Lock again, a
// peek, ends the section: R23 drops those edges.)
func lockAllWaitingOnAShard(t *testing.T, relock func(s *waitedShard)) {
	fresh(t)
	const n, k = 100, 5
	shards := make([]*waitedShard, n)
	for i := range shards {
		shards[i] = &waitedShard{ready: i != k}
		shards[i].cond = lockorder.NewCond(&shards[i].mu)
	}
	run(func() {
		for i, s := range shards {
			s.mu.Lock()
			if i == k {
				relock(s)
			}
		}
		for i := n - 1; i >= 0; i-- {
			shards[i].mu.Unlock()
		}
	})
	run(func() { lockAB(&shards[k].mu, &shards[0].mu) })
	assert.Len(t, only(lockorder.KindCycle), 1, "shard 0 -> shard k, then shard k -> shard 0")
}

type waitedShard struct {
	mu    lockorder.Mutex
	cond  *lockorder.Cond
	ready bool
}

func TestACondWaitInALockAllPastTheBoundClosesTheCycle(t *testing.T) {
	lockAllWaitingOnAShard(t, func(s *waitedShard) {
		waiting := make(chan struct{})
		go func() { // makes the shard ready once the lock-all waits
			<-waiting
			s.mu.Lock()
			s.ready = true
			s.cond.Signal()
			s.mu.Unlock()
		}()
		close(waiting)
		for !s.ready {
			s.cond.Wait()
		}
	})
}

// A lock-all deeper than held.MaxProving (a nesting: its pushed-out edges
// are added as proved) read-locks rw at depth k and holds it to the end,
// as its shards. The section under rw goes on through each of these; its
// edges "shard i -> rw", pushed out, close the true cycle with another
// goroutine's "rw (write), then shard 0":
//   - a recursive read hold, released out of order once shard k is taken:
//     the goroutine still holds the first;
//   - a Cond.Wait on rw.RLocker(), which releases the read hold and takes
//     it again;
//   - two other goroutines handing a read hold of rw off (RLock in one,
//     RUnlock in the other: legal), which bumps rw's read generation
//     (R13), so the lock-all's own read hold looks handed off (G.Valid
//     false), though it is not: a read hold's staleness is no sign that
//     the section under it ended.
func TestAReadSectionThatGoesOnInALockAllPastTheBoundClosesTheCycle(t *testing.T) {
	const n, k = 100, 5
	for _, tc := range []struct {
		name   string
		before func(rw *lockorder.RWMutex)        // once rw is read-locked, before shard k
		after  func(i int, rw *lockorder.RWMutex) // once shard i is locked
	}{
		{"recursive RUnlock", func(rw *lockorder.RWMutex) { rw.RLock() }, func(i int, rw *lockorder.RWMutex) {
			if i == k {
				rw.RUnlock()
			}
		}},
		{"Cond.Wait on an RLocker", func(rw *lockorder.RWMutex) {
			cond := lockorder.NewCond(rw.RLocker())
			woke := make(chan struct{})
			go func() { // wakes the Wait, whenever it starts
				for {
					cond.Broadcast()
					select {
					case <-woke:
						return
					default:
						runtime.Gosched()
					}
				}
			}()
			cond.Wait()
			close(woke)
		}, func(int, *lockorder.RWMutex) {}},
		{"read hand-off by others", func(*lockorder.RWMutex) {}, func(i int, rw *lockorder.RWMutex) {
			if i == k+1 {
				handed := make(chan struct{})
				go func() { rw.RLock(); close(handed) }()
				<-handed
				run(func() { rw.RUnlock() }) // a hand-off between two others
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh(t)
			shards := make([]*lockorder.Mutex, n)
			for i := range shards {
				shards[i] = new(lockorder.Mutex)
			}
			var rw lockorder.RWMutex
			run(func() {
				for i, s := range shards {
					if i == k {
						rw.RLock()
						tc.before(&rw)
					}
					s.Lock()
					tc.after(i, &rw)
				}
				for i := n - 1; i >= 0; i-- {
					shards[i].Unlock()
					if i == k {
						rw.RUnlock()
					}
				}
			})
			run(func() { lockAB(&rw, shards[0]) })
			assert.Len(t, only(lockorder.KindCycle), 1, "shard 0 -> rw, then rw -> shard 0")
		})
	}
}

// A Cond.Wait in ModeOff gives its Mutex no identity (no allocation, no
// walk of the caller's stack): a SetClass after it still passes.
func TestACondWaitInModeOffMakesNoIdentity(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithMode(lockorder.ModeOff))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	var mu lockorder.Mutex
	c := lockorder.NewCond(&mu)
	ready := false
	mu.Lock()
	go func() {
		mu.Lock()
		ready = true
		c.Signal()
		mu.Unlock()
	}()
	for !ready {
		c.Wait()
	}
	mu.Unlock()
	assert.NotPanics(t, func() { mu.SetClass("condoff") }, "ModeOff made mu no identity before")
}
