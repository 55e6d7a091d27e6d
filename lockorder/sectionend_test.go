//go:build !syncwatch_off

package lockorder_test

import (
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

// A lock-all deeper than held.MaxProving in which shard k (an RWMutex) is
// read-locked twice, the second hold released out of order once shard k+1
// is taken. The goroutine still holds the first: the section under it goes
// on, and its edges, pushed out, are added as a nesting's, closing the
// cycle with another goroutine's "rw, then shard 0".
func TestARecursiveRUnlockInALockAllPastTheBoundClosesTheCycle(t *testing.T) {
	fresh(t)
	const n, k = 100, 5
	shards := make([]*lockorder.Mutex, n)
	for i := range shards {
		shards[i] = new(lockorder.Mutex)
	}
	var rw lockorder.RWMutex
	run(func() {
		for i, s := range shards {
			if i == k {
				rw.RLock()
				rw.RLock()
			}
			s.Lock()
			if i == k {
				rw.RUnlock()
			}
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
}
