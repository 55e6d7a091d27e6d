//go:build !syncwatch_off

package lockorder_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A recursive Lock is reported once it is proven blocked for good: here
// every goroutine of the test binary is blocked. Any goroutine could still
// unlock the mutex before that (see TestLockUsedAsACompletionSignal).
func TestRecursiveLockReportedOnceBlockedForGood(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("rec")
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Lock()
		m.Lock() // blocks as sync.Mutex would; reported on evidence
		m.Unlock()
	}()
	waitUntil(t, func() bool { return len(only(lockorder.KindRecursiveLock)) == 1 }, "the recursive-lock report")
	select {
	case <-done:
		t.Fatal("the second Lock did not block")
	case <-time.After(20 * time.Millisecond):
	}
	m.Unlock() // release the first hold on the goroutine's behalf
	<-done
	v := only(lockorder.KindRecursiveLock)[0]
	assert.Equal(t, []string{"rec"}, lockClasses(v))
	require.NotEmpty(t, v.Stack)
	assert.Contains(t, v.Stack[0].Function, "TestRecursiveLockReportedOnceBlockedForGood")
	assert.Len(t, lockorder.Violations(), 1, "nothing else: the re-acquired lock is released cleanly")
}

func TestRecursiveRLock(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rrec")
	run(func() {
		m.RLock()
		m.RLock() // no writer is waiting, so it succeeds; still forbidden
		m.RUnlock()
		m.RUnlock()
	})
	vs := only(lockorder.KindRecursiveRLock)
	require.Len(t, vs, 1)
	assert.Equal(t, []string{"rrec"}, lockClasses(vs[0]))
	assert.Len(t, lockorder.Violations(), 1)
}

func TestRLockWhileHoldingWriteIsRecursiveLock(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewRWMutex("wr")
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Lock()
		m.RLock() // deadlocks on itself
		m.RUnlock()
	}()
	waitUntil(t, func() bool { return len(only(lockorder.KindRecursiveLock)) == 1 }, "the report")
	m.Unlock()
	<-done
	assert.Equal(t, []string{"wr"}, lockClasses(only(lockorder.KindRecursiveLock)[0]))
}

// A Mutex used as a completion signal: locked, handed to a worker that
// unlocks it when done, and locked again to wait for the worker. sync
// allows it; the second Lock waits for a worker that is busy (here
// sleeping, then running), which could unlock it at any time: no report.
func TestLockUsedAsACompletionSignal(t *testing.T) {
	fresh(t)
	shortGrace(t)
	lockorder.Configure(lockorder.WithLongWait(time.Minute))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
	m := lockorder.NewMutex("done-signal")
	m.Lock()
	go func() {
		// The work: longer than the grace period, until the monitor has
		// looked into the wait below.
		waitingOn(t, "done-signal", 1)
		busyUntilLookedInto(t)
		m.Unlock()
	}()
	m.Lock() // waits for the worker
	m.Unlock()
	assert.Empty(t, lockorder.Violations())
}

func TestTryLockOnHeldLockIsNotAViolation(t *testing.T) {
	fresh(t)
	var m lockorder.Mutex
	run(func() {
		m.Lock()
		assert.False(t, m.TryLock())
		m.Unlock()
	})
	assert.Empty(t, lockorder.Violations())
}
