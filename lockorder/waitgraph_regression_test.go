//go:build !syncwatch_off

package lockorder_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
)

// Regression tests from an independent review of the wait-for graph.

// A WaitGroup waited on under a lock that several of its workers need: the
// workers are listed in no fixed order, and the cycle must still be seen
// as the same one for the whole grace period.
func TestWaitGroupPoolDeadlock(t *testing.T) {
	reportDeadlocks(t)
	l := lockorder.NewMutex("pool-l")
	var wg lockorder.WaitGroup
	l.Lock()
	started := make(chan struct{}, 4)
	for range 4 {
		wg.Go(func() {
			started <- struct{}{}
			l.Lock()
			l.Unlock()
		})
	}
	for range 4 {
		<-started
	}
	broken := make(chan lockorder.Violation, 1)
	go func() {
		var v lockorder.Violation
		defer func() {
			l.Unlock() // break it, reported or not, so that a miss fails the test rather than hangs it
			broken <- v
		}()
		v = awaitKind(t, lockorder.KindDeadlock, time.Minute)
	}()
	wg.Wait()
	v := <-broken
	assert.Contains(t, v.Message, "waits for WaitGroup lockorder_test.TestWaitGroupPoolDeadlock (waitgraph_regression_test.go:")
	assert.Contains(t, v.Message, "lock pool-l#")
}

// A lock taken in ModeTrace records no holder, so the holder a ModeCheck
// waiter finds is stale: no deadlock may rest on it.
func TestStaleHolderAfterModeSwitchIsNoDeadlock(t *testing.T) {
	reportDeadlocks(t)
	a, m := lockorder.NewMutex("stale-a"), lockorder.NewMutex("stale-m")
	g2go, g2done, step := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		m.Lock()
		m.Unlock() // its own unlock: m's recorded holder stays this goroutine
		step <- struct{}{}
		<-g2go
		a.Lock() // waits for the goroutine below, which holds a
		a.Unlock()
		close(g2done)
	}()
	<-step
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	held, release := make(chan struct{}), make(chan struct{})
	go func() { // holds m, taken in trace mode, until released
		m.Lock()
		close(held)
		<-release
		m.Unlock()
	}()
	<-held
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	g1done := make(chan struct{})
	go func() {
		a.Lock()
		close(g2go)
		m.Lock() // waits for the trace-mode holder; m says the first goroutine
		m.Unlock()
		a.Unlock()
		close(g1done)
	}()
	waitingOn(t, "stale-m", 1)
	waitingOn(t, "stale-a", 1)
	// A deadlock is a cycle of waits that lasts: there is none, however
	// long the waits last.
	assert.Empty(t, waitfor.Snapshot().Cycles(), "a cycle through m's stale holder")
	close(release)
	<-g1done
	<-g2done
	assert.Empty(t, only(lockorder.KindDeadlock))
}

// A handler that blocks on a long-wait report holds up no later report.
func TestBlockingHandlerDoesNotStopTheMonitor(t *testing.T) {
	reportDeadlocks(t)
	stuck := make(chan struct{})
	defer close(stuck)
	lockorder.Configure(lockorder.WithLongWait(100*time.Millisecond), lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindLongWait {
			<-stuck
		}
	}))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
	slow := lockorder.NewMutex("slow-holder")
	slow.Lock()
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		slow.Lock() // a long wait: its report blocks the handler
		slow.Unlock()
	}()
	awaitKind(t, lockorder.KindLongWait, 10*time.Second)
	self := lockorder.NewMutex("self-after")
	locked := make(chan struct{})
	go func() {
		self.Lock()
		close(locked)
		self.Lock() // a deadlock after the stuck handler
		self.Unlock()
	}()
	<-locked
	v := awaitKind(t, lockorder.KindRecursiveLock, time.Minute)
	assert.True(t, strings.Contains(v.Message, "self-after#"), v.Message)
	self.Unlock()
	slow.Unlock()
	<-waited
}

func TestWaitGroupGoPanicEndsTheProgram(t *testing.T) {
	out := runFatal(t, "wg-go-panic")
	require.Contains(t, out, "panic: boom")
	assert.NotContains(t, out, "Wait returned")
}

// The monitor delivers a deadlock on a goroutine of its own, after it
// looked. A cycle broken in between by a goroutine outside it (here the
// Unlock of a lock that another goroutine took) is no deadlock: nothing is
// reported, and DeadlockPanic does not end the program. (A test's cleanup
// that broke a deadlock and restored DeadlockPanic panicked the binary.)
func TestDeadlockBrokenBeforeDeliveryIsNotReported(t *testing.T) {
	fresh(t) // DeadlockPanic: the action in force
	l := lockorder.NewMutex("delivery-l")
	var wg lockorder.WaitGroup
	l.Lock()
	wg.Go(func() {
		l.Lock()
		l.Unlock()
	})
	found := make(chan waitfor.Finding, 1)
	go func() {
		var f waitfor.Finding
		require.Eventually(t, func() bool {
			for _, c := range waitfor.Snapshot().Cycles() {
				if strings.Contains(waitfor.Describe(c[0])+waitfor.Describe(c[len(c)-1]), "delivery-l#") {
					f = waitfor.Finding{Kind: waitfor.Deadlock, Waits: c, Graph: waitfor.Snapshot()}
					return true
				}
			}
			return false
		}, 10*time.Second, time.Millisecond)
		standing := f
		standing.Dump = waitfor.Fresh()
		found <- standing
		l.Unlock() // break it from outside the cycle
	}()
	wg.Wait()
	f := <-found
	assert.NotPanics(t, func() { lockorder.DeliverFinding(f) })
	assert.Empty(t, only(lockorder.KindDeadlock))
}
