//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A chain cached too deep (R25, 71444ef) stands for no edge. The same
// chain key can come back within the bound: a read hold at its bottom
// released by another goroutine (R13) leaves the entry in the stack, and
// in the key, until a Prune. X taken again under the same 255 shards (256
// entries, one no longer a hold) hits the cache and records no edge from
// the shards, where before 71444ef the chain was new, pruned to 255 holds
// and recorded. The inversion X -> s0 is then missed.
func TestADeepChainCachedThenWithinTheBoundRecordsItsEdges(t *testing.T) {
	fresh(t)
	r := lockorder.NewRWMutex("ds-R")
	x := lockorder.NewMutex("ds-X")
	ss := make([]*lockorder.Mutex, 255)
	for i := range ss {
		ss[i] = new(lockorder.Mutex)
	}
	taken, released, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		r.RLock() // released by the other goroutine below
		for _, s := range ss {
			s.Lock()
		}
		x.Lock() // 256 entries: too deep, records nothing, cached
		x.Unlock()
		close(taken)
		<-released
		x.Lock() // 255 holds now, the same chain key
		x.Unlock()
		for i := len(ss) - 1; i >= 0; i-- {
			ss[i].Unlock()
		}
	}()
	<-taken
	r.RUnlock() // a read hold released by a goroutine that did not take it (R13)
	close(released)
	<-done
	run(func() { lockAB(x, ss[0]) })
	assert.NotEmpty(t, only(lockorder.KindCycle), "s0 then X within the bound, and X then s0")
}

// R25's depth counts the holds still the goroutine's own: a write hold
// handed off (unlocked by another goroutine, R14) is no longer one. A
// first write of W under 255 shards and that stale hold is within the
// bound, and seen: W is written, so the read cycle through W below can
// block (a writer queued on W holds back the second RLock).
func TestAWriteUnderAHandedOffHoldAtTheBoundIsSeen(t *testing.T) {
	fresh(t)
	w, y := lockorder.NewRWMutex("hw-W"), lockorder.NewMutex("hw-Y")
	h := new(lockorder.Mutex)
	ss := make([]*lockorder.Mutex, 255)
	for i := range ss {
		ss[i] = new(lockorder.Mutex)
	}
	locked, unlocked, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for _, s := range ss {
			s.Lock()
		}
		h.Lock() // unlocked by the test goroutine
		close(locked)
		<-unlocked
		w.Lock() // 255 holds of its own: W's first write, seen
		w.Unlock()
		for i := len(ss) - 1; i >= 0; i-- {
			ss[i].Unlock()
		}
	}()
	<-locked
	h.Unlock()
	close(unlocked)
	<-done
	run(func() {
		w.RLock()
		y.Lock()
		y.Unlock()
		w.RUnlock()
	})
	run(func() {
		y.Lock()
		w.RLock()
		w.RUnlock()
		y.Unlock()
	})
	assert.NotEmpty(t, only(lockorder.KindCycle), "W read-held then Y, and Y then W read-held, with W written")
}
