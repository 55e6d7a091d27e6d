//go:build !syncwatch_off

package lockorder_test

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/lockorder"
)

// evidenceChild marks the child process that runs
// TestADeadlockOnEvidenceIsProvedOnceTheTimerHasFired.
const evidenceChild = "LOCKORDER_EVIDENCE_CHILD"

// A deadlock reported on the evidence of every goroutine blocked (RULES.md
// W1), which a timer can still prove wrong: followed until its waits end,
// along with a long-wait of the same waits, and proved once the runtime
// can.

// A long-wait reported on a wait, then the evidence-only recursive-lock
// report of the same wait: both follow the wait, and once it ends (a
// correct AfterFunc hand-off), both records are expected, not failing.
func TestAnEvidenceReportAfterALongWaitIsExpectedOnceTheWaitEnds(t *testing.T) {
	fresh(t)
	shortGrace(t)
	lockorder.Configure(lockorder.WithLongWait(50 * time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })

	mu := lockorder.NewMutex("ev-lease")
	mu.Lock()
	timer := time.AfterFunc(time.Hour, mu.Unlock)
	// A worker still at its work (awake: see pollBusy) keeps the program
	// from looking all blocked until the long-wait is reported.
	var stop atomic.Bool
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		pollBusy(stop.Load)
	}()
	var lonce, ronce sync.Once
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		switch v.Kind {
		case lockorder.KindLongWait:
			lonce.Do(func() { stop.Store(true) })
		case lockorder.KindRecursiveLock:
			ronce.Do(func() { timer.Reset(0) }) // as if the hour had passed
		}
	}))
	mu.Lock() // ends when the timer unlocks, as with sync
	mu.Unlock()
	<-worked

	lw := only(lockorder.KindLongWait)
	require.Len(t, lw, 1)
	assert.True(t, lw[0].Expected, "the long-wait ended")
	rl := only(lockorder.KindRecursiveLock)
	require.Len(t, rl, 1)
	assert.Contains(t, rl[0].Message, "as is every goroutine of the program")
	assert.True(t, rl[0].Expected, "the wait ended: the evidence-2 record must be expected, not failing:\n%s", rl[0].Detail)
}

// A cycle of two whose first wait was already followed by a long-wait: the
// deadlock's record follows both waits, so once the second ends (a timer
// hands off the lock it waits for) it still fails while the first goes on
// (its goroutine is blocked behind one that now blocks holding the lock it
// needs).
func TestAnEvidenceDeadlockFailsWhileOneOfItsWaitsGoesOn(t *testing.T) {
	fresh(t)
	shortGrace(t)
	lockorder.Configure(lockorder.WithLongWait(50 * time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })

	a, b := lockorder.NewMutex("ev-a"), lockorder.NewMutex("ev-b")
	g2Go, gotA, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	bHeld, done := make(chan struct{}), make(chan struct{}, 2)
	timer := time.AfterFunc(time.Hour, a.Unlock) // hands a off, as a lease would
	var lonce, donce sync.Once
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		switch v.Kind {
		case lockorder.KindLongWait:
			lonce.Do(func() { close(g2Go) })
		case lockorder.KindDeadlock:
			donce.Do(func() { timer.Reset(0) })
		}
	}))
	go func() { // G2
		defer func() { done <- struct{}{} }()
		b.Lock()
		close(bHeld)
		<-g2Go
		a.Lock() // closes the cycle; ends when the timer hands a off
		close(gotA)
		<-release // blocks, holding a and b
		a.Unlock()
		b.Unlock()
	}()
	<-bHeld
	go func() { // G1
		defer func() { done <- struct{}{} }()
		a.Lock()
		b.Lock() // long-wait first; goes on after G2 got a
		b.Unlock()
	}()
	<-gotA
	// G1 still waits for b, which G2 holds while it blocks on release.
	dl := only(lockorder.KindDeadlock)
	require.Len(t, dl, 1)
	assert.False(t, dl[0].Expected, "G1's wait goes on: the record must still fail:\n%s", dl[0].Detail)
	close(release)
	<-done
	<-done
}

// With the runtime's leak detection (Go 1.27; 1.26 with
// GOEXPERIMENT=goroutineleakprofile): a deadlock first seen on evidence
// only, while a pending timer still reached its locks, is looked into
// again, and proved, with a report "for good", once the timer has fired
// without breaking it. The wait for that report is bounded (the monitor
// looks at most every 10 s).
func TestADeadlockOnEvidenceIsProvedOnceTheTimerHasFired(t *testing.T) {
	if !proofAvailable() {
		t.Skip("needs the runtime's leak detection")
	}
	if os.Getenv(evidenceChild) == "" {
		// Its goroutines stay blocked for good (the runtime proved them
		// leaked, and waking a leaked goroutine is a fatal error): alone
		// in a process of its own, so that no other test sees them.
		runTestInChild(t, evidenceChild+"=1")
		return
	}
	reportDeadlocks(t) // DeadlockReport: no panic
	shortGrace(t)
	type store struct {
		a, b    lockorder.Mutex
		expired bool
	}
	inconclusive := make(chan struct{})
	conclusive := make(chan string, 4)
	var once sync.Once
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind != lockorder.KindDeadlock {
			return
		}
		if strings.Contains(v.Message, "for good") {
			conclusive <- v.Message
			return
		}
		once.Do(func() { close(inconclusive) })
	}))
	fired := make(chan struct{})
	func() {
		s := &store{}
		s.a.SetClass("ev-store-a")
		s.b.SetClass("ev-store-b")
		// A cache expiry: while pending, the timer reaches the store, and
		// so its locks; nothing else outside the deadlock does.
		time.AfterFunc(3*time.Second, func() { s.expired = true; close(fired) })
		var ready sync.WaitGroup
		ready.Add(2)
		go func(s *store) { s.a.Lock(); ready.Done(); ready.Wait(); s.b.Lock() }(s)
		go func(s *store) { s.b.Lock(); ready.Done(); ready.Wait(); s.a.Lock() }(s)
	}()
	select {
	case <-inconclusive:
	case m := <-conclusive:
		t.Skipf("proved before the timer fired (the timer did not hide it): %s", m)
	}
	<-fired
	select {
	case m := <-conclusive:
		t.Logf("proved: %s", m)
	case <-time.After(25 * time.Second):
		leak.Detect()
		buf := make([]byte, 1<<20)
		dump := string(buf[:runtime.Stack(buf, true)])
		t.Errorf("the deadlock, provable once the timer fired, was never proved (no deadlock action under DeadlockPanic); leaked now: %d goroutines", strings.Count(dump, "(leaked)"))
	} // The goroutines stay blocked: the runtime proved them leaked, and
	// waking a leaked goroutine is a fatal error.
}

// A correct lease hand-off: G1 locks a and hands it to a timer
// (time.AfterFunc(d, a.Unlock)), then locks b; G2 holds b and waits for a.
// Every goroutine is blocked until the timer fires: a deadlock on evidence
// only, which adds G1's edge a->b (held back by R23: G1 never released a)
// and so the cycle with G2's b->a. Once the timer fires and the waits end,
// both the deadlock and the cycle are expected, not failing: no record of
// the run fails.
func TestATimersHandOffLeavesNoFailingCycle(t *testing.T) {
	fresh(t)
	shortGrace(t)
	a, b := lockorder.NewMutex("ev-lease-a"), lockorder.NewMutex("ev-lease-b")
	var timer *time.Timer
	timerSet := make(chan struct{})
	var donce sync.Once
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindDeadlock {
			donce.Do(func() { <-timerSet; timer.Reset(0) }) // as if the lease ran out
		}
	}))
	bHeld, aHeld := make(chan struct{}), make(chan struct{})
	done := make(chan struct{}, 2)
	go func() { // G2
		defer func() { done <- struct{}{} }()
		b.Lock()
		close(bHeld)
		<-aHeld
		a.Lock()
		a.Unlock()
		b.Unlock()
	}()
	go func() { // G1
		defer func() { done <- struct{}{} }()
		<-bHeld
		a.Lock()
		timer = time.AfterFunc(time.Hour, a.Unlock) // the lease
		close(timerSet)
		close(aHeld)
		b.Lock()
		b.Unlock()
	}()
	<-done
	<-done
	dl := only(lockorder.KindDeadlock)
	if assert.Len(t, dl, 1) {
		assert.True(t, dl[0].Expected, "the deadlock on evidence ended")
	}
	for _, v := range lockorder.Violations() {
		assert.True(t, v.Expected, "a correct hand-off left a failing %s record: %s", v.Kind, v.Message)
	}
}
