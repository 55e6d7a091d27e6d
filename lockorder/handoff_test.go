//go:build !syncwatch_off

package lockorder_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Read holds handed to another goroutine: sync.RWMutex lets one goroutine
// RLock and another RUnlock, so a goroutine that read-locks what it seems
// to read-hold is reported only once the holds prove to be its own.

// TestRecursiveRLockReportedOnceBothHoldsAreReleased: the report of a
// goroutine read-locking twice waits for its releases, and comes with the
// stack of the second RLock.
func TestRecursiveRLockReportedOnceBothHoldsAreReleased(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rrproof")
	run(func() {
		m.RLock()
		secondRLock(m)
		m.RUnlock()
		assert.Empty(t, only(lockorder.KindRecursiveRLock), "one release proves only one hold the goroutine's own")
		m.RUnlock()
	})
	vs := only(lockorder.KindRecursiveRLock)
	require.Len(t, vs, 1)
	assert.Contains(t, vs[0].Message, "read-locks rrproof#")
	require.NotEmpty(t, vs[0].Stack)
	assert.Contains(t, vs[0].Stack[0].Function, "secondRLock", "the stack is the second RLock's")
}

//go:noinline
func secondRLock(m *lockorder.RWMutex) { m.RLock() }

// TestRecursiveRLockOfHandedOffHoldIsNotReported: G read-locks, hands the
// hold to H, read-locks again; whichever releases first, H's release of
// G's first hold is legal and nothing is reported.
func TestRecursiveRLockOfHandedOffHoldIsNotReported(t *testing.T) {
	for _, handFirst := range []bool{false, true} {
		fresh(t)
		m := lockorder.NewRWMutex("rrhand")
		handed, released, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() { // H
			defer close(done)
			<-handed
			m.RUnlock() // G's first hold, handed over
			close(released)
		}()
		run(func() { // G
			m.RLock()
			if handFirst {
				m.RLock()
				close(handed)
				<-released
				m.RUnlock()
				return
			}
			close(handed)
			m.RLock()
			m.RUnlock()
			<-released
		})
		<-done
		assert.Empty(t, lockorder.Violations(), "handFirst=%v", handFirst)
	}
}

// TestRecursiveRLockHeldBackIsDroppedWhenAHoldIsHandedOff: G read-locks
// twice and releases one hold itself; H then releases the other. One own
// release does not prove both holds were G's (the first may have been
// H's to release all along), so nothing is reported.
func TestRecursiveRLockHeldBackIsDroppedWhenAHoldIsHandedOff(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rrhalf")
	run(func() {
		m.RLock()
		m.RLock()
		m.RUnlock()
	})
	run(func() { m.RUnlock() })
	run(func() { m.RLock(); m.RUnlock() }) // the class is still checked
	assert.Empty(t, lockorder.Violations())
}

// TestRecursiveRLockBehindAWriterIsADeadlock: when a writer queues
// between the two RLocks, the second blocks for good: the wait-for graph
// reports G and the writer waiting for each other.
func TestRecursiveRLockBehindAWriterIsADeadlock(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewRWMutex("rrwriter")
	held, done := make(chan struct{}), make(chan struct{}, 2)
	go func() { // G
		m.RLock()
		close(held)
		waitForWriter(m)
		m.RLock() // queues behind the writer, which waits for this goroutine
		m.RUnlock()
		done <- struct{}{}
	}()
	<-held
	go func() { m.Lock(); m.Unlock(); done <- struct{}{} }()
	v := awaitKind(t, lockorder.KindDeadlock, 10*time.Second)
	assert.Contains(t, v.Message, "cycle of 2 goroutines")
	assert.Contains(t, v.Message, "rrwriter#")
	m.RUnlock() // G's first hold, released on its behalf: the cycle breaks
	<-done
	<-done
}

// waitForWriter returns once a writer has queued on m (which is
// read-held), so that a new reader would queue behind it.
func waitForWriter(m *lockorder.RWMutex) {
	for m.TryRLock() {
		m.RUnlock()
		time.Sleep(time.Millisecond)
	}
}

// TestWriteLockOverOwnReadHoldIsADeadlockAfterGrace: Lock of an RWMutex
// the goroutine read-holds waits for itself. It is not reported at the
// Lock (another goroutine may release the read hold), but once the wait
// has lasted the grace period with the hold still the goroutine's.
func TestWriteLockOverOwnReadHoldIsADeadlockAfterGrace(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewRWMutex("wovr")
	held, done := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		m.RLock()
		close(held)
		m.Lock() // waits for its own read hold
		m.Unlock()
	}()
	<-held
	v := awaitKind(t, lockorder.KindDeadlock, 10*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "reported only after the grace period")
	assert.Contains(t, v.Message, "cycle of 1 goroutine")
	assert.Contains(t, v.Message, "wovr#")
	assert.Empty(t, only(lockorder.KindRecursiveLock), "not reported as a recursive lock at the Lock")
	m.RUnlock() // release the read hold on its behalf
	<-done
}

// TestWriteLockOverHandedOffReadHoldIsNotReported: G read-locks, hands
// the hold to H, and write-locks; H's release lets G in. Nothing is
// reported, then or later.
func TestWriteLockOverHandedOffReadHoldIsNotReported(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewRWMutex("wovrhand")
	handed, done := make(chan struct{}), make(chan struct{})
	go func() {
		<-handed
		time.Sleep(300 * time.Millisecond) // G is waiting in Lock by now
		m.RUnlock()
	}()
	run(func() {
		m.RLock()
		close(handed)
		m.Lock()
		m.Unlock()
		close(done)
	})
	<-done
	time.Sleep(3 * monitorTick)
	assert.Empty(t, lockorder.Violations())
}
