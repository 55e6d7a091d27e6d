//go:build !syncwatch_off

package lockorder_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// waitFor polls cond for up to 5s; the tests use it to wait for a report
// that is made before a goroutine blocks.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRecursiveLockReportedBeforeBlocking(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("rec")
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Lock()
		m.Lock() // reported, then blocks as sync.Mutex would
		m.Unlock()
	}()
	waitFor(t, func() bool { return len(only(lockorder.KindRecursiveLock)) == 1 }, "the recursive-lock report")
	select {
	case <-done:
		t.Fatal("the second Lock did not block")
	case <-time.After(20 * time.Millisecond):
	}
	m.Unlock() // release the first hold on the goroutine's behalf
	<-done
	v := only(lockorder.KindRecursiveLock)[0]
	assert.Contains(t, v.Message, "locks rec#")
	assert.Contains(t, v.Message, "which it already holds for writing")
	require.NotEmpty(t, v.Stack)
	assert.Contains(t, v.Stack[0].Function, "TestRecursiveLockReportedBeforeBlocking")
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
	assert.Contains(t, vs[0].Message, "read-locks rrec#")
	assert.Contains(t, vs[0].Message, "for reading")
	assert.Len(t, lockorder.Violations(), 1)
}

func TestRLockWhileHoldingWriteIsRecursiveLock(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("wr")
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Lock()
		m.RLock() // deadlocks on itself
		m.RUnlock()
	}()
	waitFor(t, func() bool { return len(only(lockorder.KindRecursiveLock)) == 1 }, "the report")
	m.Unlock()
	<-done
	assert.Contains(t, only(lockorder.KindRecursiveLock)[0].Message, "read-locks wr#")
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
