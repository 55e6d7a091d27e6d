//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"errors"
	"strings"
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
		waitForWriter(t, m)
		m.RLock() // queues behind the writer, which waits for this goroutine
		m.RUnlock()
		done <- struct{}{}
	}()
	<-held
	go func() { m.Lock(); m.Unlock(); done <- struct{}{} }()
	v := awaitKind(t, lockorder.KindDeadlock, time.Minute)
	assert.Contains(t, v.Message, "cycle of 2 goroutines")
	assert.Contains(t, v.Message, "rrwriter#")
	m.RUnlock() // G's first hold, released on its behalf: the cycle breaks
	<-done
	<-done
}

// waitForWriter returns once a writer has queued on m (which is
// read-held), so that a new reader would queue behind it. The caller
// stays busy meanwhile (see pollBusy): it may be a goroutine the writer
// waits for.
func waitForWriter(t *testing.T, m *lockorder.RWMutex) {
	assert.True(t, pollBusy(func() bool {
		if m.TryRLock() {
			m.RUnlock()
			return false
		}
		return true
	}), "a writer queues on the lock")
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
	v := awaitKind(t, lockorder.KindDeadlock, time.Minute)
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
		waitForWriter(t, m) // G is waiting in Lock
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
	assert.Empty(t, lockorder.Violations())
	assert.Zero(t, waitsOn("wovrhand"), "no wait is left to report later")
}

// TestHandOffThenTwoOwnPairsIsNotRecursive: G read-locks and hands the
// hold to H (which releases it later); G then takes and releases m twice,
// never holding two read holds of its own at once. Only G's own count of
// holds decides: its second pair adds one hold and releases it, which
// proves nothing of the hold H has.
func TestHandOffThenTwoOwnPairsIsNotRecursive(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rrpairs")
	handed, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { // H
		defer close(done)
		<-handed
		<-release
		m.RUnlock()
	}()
	run(func() { // G
		m.RLock()
		close(handed) // the hold is H's now
		m.RLock()
		m.RUnlock()
		m.RLock()
		m.RUnlock()
	})
	close(release)
	<-done
	assert.Empty(t, only(lockorder.KindRecursiveRLock), "G never held two read holds of its own")
}

// TestUnrelatedReleaseKeepsGenuineRecursiveRLock: G read-locks twice and
// releases both holds itself; meanwhile R, an ordinary reader whose hold
// looks stale since an earlier hand-off, releases its own. R's release is
// not G's: the recursive read lock is reported.
func TestUnrelatedReleaseKeepsGenuineRecursiveRLock(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rrunrelated")
	run(func() { m.RLock() }) // H read-locks, K releases below: a hand-off
	rHeld, rGo, rDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { // R
		defer close(rDone)
		m.RLock()
		close(rHeld)
		<-rGo
		m.RUnlock()
	}()
	<-rHeld
	run(func() { m.RUnlock() }) // K
	gIn, gGo, gDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { // G
		defer close(gDone)
		m.RLock()
		m.RLock()
		close(gIn)
		<-gGo
		m.RUnlock()
		m.RUnlock()
	}()
	<-gIn
	close(rGo)
	<-rDone
	close(gGo)
	<-gDone
	assert.Len(t, only(lockorder.KindRecursiveRLock), 1, "G read-locked twice and released both itself")
}

// TestWriteOverOwnReadHoldAfterOtherHandOffIsALongWait documents a limit.
// G read-locks m and write-locks it; while G waits, K releases a hold of
// m that H took (a legal hand-off). One read hold is left, and the
// checker cannot tell whether it is G's (G waits for itself) or H's with
// G's handed to K: a hand-off leaves no mark on the hold. So no deadlock
// is reported; the wait is reported as a long wait, and the hang is not
// hidden.
func TestWriteOverOwnReadHoldAfterOtherHandOffIsALongWait(t *testing.T) {
	reportDeadlocks(t)
	lockorder.Configure(lockorder.WithLongWait(time.Second))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
	m := lockorder.NewRWMutex("wovrother")
	run(func() { m.RLock() }) // H: a hold to be handed off
	gHeld, gDone := make(chan struct{}), make(chan struct{})
	go func() { // G
		defer close(gDone)
		m.RLock()
		close(gHeld)
		m.Lock() // waits for G itself (and H's hold)
		m.Unlock()
	}()
	<-gHeld
	waitForWriter(t, m)         // G waits in Lock
	run(func() { m.RUnlock() }) // K releases H's hold
	v := awaitKind(t, lockorder.KindLongWait, 10*time.Second)
	assert.Contains(t, v.Message, "wovrother#")
	m.RUnlock() // G's hold, released on its behalf
	<-gDone
}

// TestLockContextOverOwnReadHoldIsReportedOnRelease: a write LockContext
// over the goroutine's own read hold can only end by giving up, whether
// at its deadline or by cancellation. Once the goroutine releases the
// hold itself, the hold was its own: recursive-lock, with the stack of
// the LockContext.
func TestLockContextOverOwnReadHoldIsReportedOnRelease(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		fresh(t)
		m := lockorder.NewRWMutex("wctxown")
		run(func() {
			m.RLock()
			// Cancelled: with no deadline, so that a loaded machine
			// cannot make the deadline come before the cancel.
			ctx, cancel := context.WithCancel(context.Background())
			if cancelled {
				time.AfterFunc(50*time.Millisecond, cancel)
			} else {
				ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
			}
			defer cancel()
			err := lockContextOver(ctx, m)
			require.Error(t, err)
			assert.Equal(t, cancelled, errors.Is(err, context.Canceled))
			assert.Empty(t, only(lockorder.KindRecursiveLock), "reported before the hold proved its own")
			m.RUnlock()
		})
		vs := only(lockorder.KindRecursiveLock)
		require.Len(t, vs, 1, "cancelled=%v: %v", cancelled, lockorder.Violations())
		assert.Contains(t, vs[0].Message, "which it already holds for reading")
		assert.True(t, stackHas(vs[0].Stack, "lockContextOver"), "the stack is the LockContext's")
	}
}

//go:noinline
func lockContextOver(ctx context.Context, m *lockorder.RWMutex) error { return m.LockContext(ctx) }

func stackHas(st lockorder.Stack, fn string) bool {
	for _, f := range st {
		if strings.Contains(f.Function, fn) {
			return true
		}
	}
	return false
}

// TestLockContextOverHandedOffReadHoldIsNotRecursive: G read-locks, hands
// the hold to H, which keeps it past G's LockContext deadline and then
// releases it. G never releases a hold of m itself: nothing but the
// wait-timeout is reported.
func TestLockContextOverHandedOffReadHoldIsNotRecursive(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("wctxhand")
	handed, gaveUp, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { // H
		defer close(done)
		<-handed
		<-gaveUp
		m.RUnlock()
	}()
	run(func() { // G
		m.RLock()
		close(handed)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.Error(t, m.LockContext(ctx))
		close(gaveUp)
		<-done
		m.RLock() // a pair of its own later proves nothing of the first
		m.RUnlock()
	})
	assert.Empty(t, only(lockorder.KindRecursiveLock))
	assert.Len(t, only(lockorder.KindWaitTimeout), 1)
}

// TestRecursiveRLockContextGivingUpIsReportedOnRelease: G read-locks, a
// writer queues, and G's RLockContext blocks behind it and times out.
// The second hold was never taken, so one release of the first by G
// proves it G's: recursive-rlock.
func TestRecursiveRLockContextGivingUpIsReportedOnRelease(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rrctx")
	wDone := make(chan struct{})
	run(func() {
		m.RLock()
		go func() { defer close(wDone); m.Lock(); m.Unlock() }()
		waitForWriter(t, m)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.Error(t, m.RLockContext(ctx))
		assert.Empty(t, only(lockorder.KindRecursiveRLock), "reported before the hold proved its own")
		m.RUnlock()
	})
	<-wDone
	assert.Len(t, only(lockorder.KindRecursiveRLock), 1, "%v", lockorder.Violations())
}

// TestRecursiveRLockContextOverHandedOffHoldIsNotReported: the same, but
// G's first hold is H's to release, after G gave up: G was never stuck
// on itself, and nothing of it is reported as recursive.
func TestRecursiveRLockContextOverHandedOffHoldIsNotReported(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rrctxhand")
	wDone, gaveUp, hDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	run(func() { // G
		m.RLock()
		go func() { defer close(hDone); <-gaveUp; m.RUnlock() }() // H
		go func() { defer close(wDone); m.Lock(); m.Unlock() }()
		waitForWriter(t, m)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.Error(t, m.RLockContext(ctx))
		close(gaveUp)
		<-wDone
		m.RLock()
		m.RUnlock()
	})
	<-hDone
	assert.Empty(t, only(lockorder.KindRecursiveRLock))
}

// TestRecursiveRLockThenExitIsHeldByExited documents a limit: a goroutine
// that read-locks twice and exits holding the holds never proves them its
// own (a goroutine that exits holding a read hold has handed it over, or
// leaked it), so no recursive-rlock is reported. The lock left held is
// reported when the program checks at exit, as lockordertest does.
func TestRecursiveRLockThenExitIsHeldByExited(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rrexit")
	run(func() { m.RLock(); m.RLock() })
	assert.Empty(t, only(lockorder.KindRecursiveRLock))
	// run's goroutine closes its channel before it is gone: check until
	// the check sees it exited.
	found := pollBusy(func() bool {
		lockorder.ReportBlocked(time.Hour)
		for _, v := range only(lockorder.KindHeldByExited) {
			if strings.Contains(v.Message, "rrexit#") {
				return true
			}
		}
		return false
	})
	assert.True(t, found, "the holds left at exit are reported: %v", lockorder.Violations())
	run(func() { m.RUnlock(); m.RUnlock() }) // released on its behalf
}
