//go:build !syncwatch_off

package lockorder_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// G is handed off (released by another goroutine) while its holder is
// blocked taking Y(read) under X: that wait is made without G, and a
// writer of Y under G may queue meanwhile. The deadlock: A: G.Lock;
// X.Lock; (G handed off) Y.RLock, behind W. W: G.Lock; Y.Lock, behind
// C's read. C: Y.RLock; X.Lock, behind A.
func TestHandOffDuringAReadWaitDoesNotGate(t *testing.T) {
	fresh(t)
	g, x := lockorder.NewMutex("r3a-G"), lockorder.NewMutex("r3a-X")
	y := lockorder.NewRWMutex("r3a-Y")
	run(func() { g.Lock(); y.Lock(); y.Unlock(); g.Unlock() }) // Y's gate {G}
	locked := make(chan struct{})
	done := make(chan struct{})
	var tried bool
	run(func() { tried = y.TryLock() }) // a write that does not queue: no gate change
	assert.True(t, tried)
	go func() {
		defer close(done)
		g.Lock()
		x.Lock()
		close(locked)
		y.RLock() // blocks behind the TryLock's hold; G handed off meanwhile
		y.RUnlock()
		x.Unlock()
	}()
	<-locked
	time.Sleep(50 * time.Millisecond)
	g.Unlock() // hand-off while A waits for Y
	y.Unlock()
	<-done
	run(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() })
	assert.Len(t, only(lockorder.KindCycle), 1, "X -> Y(read) -> X: A waited for Y without G")
}

// The same for a write of Y: W waits for Y's write while G, taken before,
// is handed off; the writers' gate keeps G.
func TestHandOffDuringAWriteWaitDoesNotGate(t *testing.T) {
	fresh(t)
	g, x := lockorder.NewMutex("r3b-G"), lockorder.NewMutex("r3b-X")
	y := lockorder.NewRWMutex("r3b-Y")
	rl := make(chan struct{})
	rel := make(chan struct{})
	rdone := make(chan struct{})
	go func() { y.RLock(); close(rl); <-rel; y.RUnlock(); close(rdone) }()
	<-rl
	locked := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Lock()
		close(locked)
		y.Lock() // first write of Y: gate {G}; blocks behind the reader
		y.Unlock()
	}()
	<-locked
	time.Sleep(50 * time.Millisecond)
	g.Unlock() // hand-off while W waits for Y
	close(rel)
	<-rdone
	<-done
	run(func() {
		g.Lock()
		x.Lock()
		y.RLock()
		y.RUnlock()
		x.Unlock()
		g.Unlock()
	})
	run(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() })
	assert.Len(t, only(lockorder.KindCycle), 1, "X -> Y(read) -> X: a writer of Y waited without G")
}

// Control: no hand-off, the cycle is held back.
func TestNoHandOffDuringTheWaitKeepsTheGate(t *testing.T) {
	fresh(t)
	g, x := lockorder.NewMutex("r3c-G"), lockorder.NewMutex("r3c-X")
	y := lockorder.NewRWMutex("r3c-Y")
	run(func() { g.Lock(); y.Lock(); y.Unlock(); g.Unlock() })
	run(func() {
		g.Lock()
		x.Lock()
		y.RLock()
		y.RUnlock()
		x.Unlock()
		g.Unlock()
	})
	run(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() })
	assert.Empty(t, only(lockorder.KindCycle))
}
