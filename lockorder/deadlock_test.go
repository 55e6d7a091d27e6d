//go:build !syncwatch_off

package lockorder_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// reportDeadlocks makes deadlocks reports only, for tests that cause one
// on purpose and then break it. The long-wait bound is a minute, so that a
// verdict that comes late on a loaded machine is not preceded by a long
// wait; tests of long waits set their own.
func reportDeadlocks(t *testing.T) {
	t.Helper()
	fresh(t)
	lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockReport), lockorder.WithLongWait(time.Minute))
	t.Cleanup(func() {
		lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic), lockorder.WithLongWait(5*time.Second))
	})
}

// awaitKind waits until a violation of kind k is recorded, and returns it.
// A deadlock proven by W1's evidence 2 needs two looks a grace period
// apart that find every goroutine blocked: under load (CI runs packages
// side by side, and cmd/syncwatch's tests build) a runnable goroutine
// puts it off, so the waits for those kinds allow a minute.
func awaitKind(t *testing.T, k lockorder.Kind, within time.Duration) lockorder.Violation {
	t.Helper()
	var got lockorder.Violation
	require.Eventually(t, func() bool {
		vs := only(k)
		if len(vs) > 0 {
			got = vs[0]
		}
		return len(vs) > 0
	}, within, 10*time.Millisecond, "no %s reported", k)
	return got
}

func TestABBADeadlockIsReportedAndCanBeBroken(t *testing.T) {
	reportDeadlocks(t)
	a, b := lockorder.NewMutex("abba-a"), lockorder.NewMutex("abba-b")
	aHeld, bHeld := make(chan struct{}), make(chan struct{})
	done := make(chan struct{}, 2)
	go func() { // takes a, then b
		a.Lock()
		close(aHeld)
		<-bHeld
		b.Lock() // blocks: b is held by the other goroutine
		b.Unlock()
		done <- struct{}{}
	}()
	go func() { // takes b, then a
		b.Lock()
		close(bHeld)
		<-aHeld
		a.Lock() // blocks: a is held by the first goroutine
		a.Unlock()
		b.Unlock()
		done <- struct{}{}
	}()
	start := time.Now()
	v := awaitKind(t, lockorder.KindDeadlock, time.Minute)
	t.Logf("reported after %v:\n%s", time.Since(start), v)
	assert.ElementsMatch(t, []string{"abba-a", "abba-b"}, lockClasses(v), "the report names both locks")
	// Any goroutine may unlock a Mutex: hand a to the second goroutine.
	a.Unlock()
	<-done
	<-done
	assert.Len(t, only(lockorder.KindDeadlock), 1, "one report per deadlock")
}

// A goroutine waits for a hand-off on a lock it took, while the worker
// handed the lock is busy past the grace period: no deadlock.
func TestHandOffAfterTheGracePeriodIsNoDeadlock(t *testing.T) {
	reportDeadlocks(t)
	shortGrace(t)
	m := lockorder.NewMutex("handoff-late")
	m.Lock()
	go func() {
		waitingOn(t, "handoff-late", 1)
		busyUntilLookedInto(t)
		m.Unlock() // a hand-off: legal
	}()
	m.Lock() // waits for the hand-off, on a lock this goroutine took
	m.Unlock()
	assert.Empty(t, only(lockorder.KindDeadlock))
	assert.Zero(t, waitsOn("handoff-late"), "no wait is left to report later")
}

func TestSelfDeadlockIsACycleOfOne(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("self")
	locked := make(chan struct{})
	go func() {
		m.Lock()
		close(locked)
		m.Lock() // recursive: blocks for good
		m.Unlock()
	}()
	<-locked
	v := awaitKind(t, lockorder.KindRecursiveLock, time.Minute)
	assert.Equal(t, []string{"self"}, lockClasses(v))
	m.Unlock() // break it
}

// Under go test, a deadlock the runtime proves fails the program, naming
// the cycle, instead of hanging until -timeout. Without that proof (Go
// 1.25, Go 1.26 as built by default) every goroutine blocked is only
// evidence (RULES.md W1): the report is printed in full, and the program
// goes on, as with sync.
func TestDeadlockFailsTheProgramUnderTest(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), childEnv+"=deadlock-abba")
	until := "" // the end of the child, which the deadlock action brings
	if !proofAvailable() {
		until = "evidence: every goroutine"
	}
	out, exited := childUntil(t, cmd, until)
	assert.Contains(t, out, "lockorder: deadlock: cycle of 2 goroutines")
	assert.Contains(t, out, "lock child-a#")
	assert.Contains(t, out, "lock child-b#")
	if proofAvailable() {
		assert.True(t, exited, "the deadlock action ends the program")
		assert.Contains(t, out, "blocked for good")
		assert.Contains(t, out, "proof: the runtime's leak detection")
		return
	}
	assert.False(t, exited, "the program ended on evidence that is not proof:\n%s", out)
	assert.Contains(t, out, "as is every goroutine of the program")
	assert.NotContains(t, out, "panic: lockorder: deadlock")
}

//go:noinline
func holdAndReceive(m *lockorder.Mutex, locked chan<- struct{}, ch <-chan int) {
	m.Lock()
	close(locked)
	<-ch
	m.Unlock()
}

// The lock-plus-channel deadlock: the holder is blocked on a channel, so
// no cycle of syncwatch waits exists, but the long wait names it.
func TestLongWaitNamesAHolderBlockedOnAChannel(t *testing.T) {
	reportDeadlocks(t)
	lockorder.Configure(lockorder.WithLongWait(200 * time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
	m := lockorder.NewMutex("aggregation")
	ch := make(chan int)
	locked := make(chan struct{})
	go holdAndReceive(m, locked, ch)
	<-locked
	waited := lockInTurn(m)
	v := awaitKind(t, lockorder.KindLongWait, 10*time.Second)
	t.Log(v)
	assert.Equal(t, []string{"aggregation"}, lockClasses(v))
	assert.NotZero(t, v.Holder)
	require.NotEmpty(t, v.HolderStack)
	assert.Contains(t, v.HolderStack[0].Function, "holdAndReceive")
	close(ch)
	<-waited
	assert.Len(t, only(lockorder.KindLongWait), 1, "once per wait")
	assert.Empty(t, only(lockorder.KindDeadlock))
}

func TestWaitForALockLeftByAnExitedGoroutine(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("left")
	leaveLocked(t, m)
	waited := lockInTurn(m)
	v := awaitKind(t, lockorder.KindHeldByExited, time.Minute)
	t.Log(v)
	assert.Equal(t, []string{"left"}, lockClasses(v))
	m.Unlock() // on the exited goroutine's behalf: legal
	<-waited
}

//go:noinline
func lockAndReturn(m *lockorder.Mutex) { m.Lock() } // forgets to unlock

// leaveLocked locks m in a goroutine that returns without unlocking it,
// and returns once that goroutine has exited.
func leaveLocked(t *testing.T, m *lockorder.Mutex) {
	t.Helper()
	done := make(chan int64)
	go func() {
		lockAndReturn(m)
		done <- goroutineID()
	}()
	id := <-done
	// Exited, not about to: a goroutine dump (the exit check's, a trim's)
	// made next must find it gone.
	require.True(t, pollBusy(func() bool { return !goroutineAlive(id) }), "the goroutine that left the lock held exits")
}

// lockInTurn locks and unlocks m in a new goroutine; the channel it
// returns is closed once that goroutine has.
func lockInTurn(m *lockorder.Mutex) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Lock()
		m.Unlock()
	}()
	return done
}

// With the held profile on, the report says where the exited goroutine
// took the lock: where its Unlock went missing.
func TestLockLeftByAnExitedGoroutineSaysWhereItWasTaken(t *testing.T) {
	reportDeadlocks(t)
	lockorder.Configure(lockorder.WithHeldProfile(true))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	m := lockorder.NewMutex("left-where")
	leaveLocked(t, m)
	waited := lockInTurn(m)
	v := awaitKind(t, lockorder.KindHeldByExited, time.Minute)
	assert.Contains(t, v.Detail, "took it at:")
	assert.Contains(t, v.Detail, "lockorder_test.lockAndReturn")
	m.Unlock()
	<-waited
}
