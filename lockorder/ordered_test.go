//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Rule R21 of docs/RULES.md: edges that syncwatch's own synchronisation
// orders one after the other cannot be pending at once, and their cycle
// is not reported; edges it does not order still are.

// Workers started by WaitGroup.Go take a then b; once Wait has returned,
// the goroutine that waited takes b then a. The two orders never overlap.
func TestOrderedByWaitGroupGo(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-go-a"), lockorder.NewMutex("r21-go-b")
	var wg lockorder.WaitGroup
	for range 3 {
		wg.Go(func() { lockAB(a, b) })
	}
	wg.Wait()
	lockAB(b, a)
	assert.Empty(t, only(lockorder.KindCycle))
}

// The same with Add, go and a deferred Done, and then a second phase of
// workers, started by WaitGroup.Go after the first phase was waited for:
// they start knowing what their starter knew.
func TestOrderedByWaitGroupDoneAndPhases(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-wg-a"), lockorder.NewMutex("r21-wg-b")
	var wg lockorder.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lockAB(a, b)
		}()
	}
	wg.Wait()
	for range 2 {
		wg.Go(func() { lockAB(b, a) })
	}
	wg.Wait()
	assert.Empty(t, only(lockorder.KindCycle))
}

// A goroutine started with a go statement does not know what its starter
// knew: syncwatch does not see it start.
func TestNotOrderedThroughAGoStatement(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-gostmt-a"), lockorder.NewMutex("r21-gostmt-b")
	var wg lockorder.WaitGroup
	wg.Go(func() { lockAB(a, b) })
	wg.Wait()
	run(func() { lockAB(b, a) })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A goroutine that learns of the workers only through a channel is not
// ordered after them: syncwatch does not see channels.
func TestNotOrderedThroughAChannel(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-ch-a"), lockorder.NewMutex("r21-ch-b")
	var wg lockorder.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		lockAB(a, b)
		close(done)
	})
	<-done
	lockAB(b, a)
	wg.Wait()
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A lock taken before the Wait is not ordered after the workers: holding
// b, the waiter may wait for a worker that holds a and waits for b. That
// deadlock is reported, though in this run the worker was done first.
func TestHoldBeforeTheWaitIsNotOrdered(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-hold-a"), lockorder.NewMutex("r21-hold-b")
	var wg lockorder.WaitGroup
	took := make(chan struct{}) // an order syncwatch does not see
	wg.Add(1)
	go func() {
		defer wg.Done()
		lockAB(a, b)
		close(took)
	}()
	<-took
	b.Lock()
	wg.Wait() // the worker's Done comes: it takes no lock any more
	a.Lock()
	a.Unlock()
	b.Unlock()
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A goroutine that does not wait is not ordered after the workers, even
// when other goroutines were: its inverse order is a cycle.
func TestAnotherGoroutineOfTheSameEdgeIsReported(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-many-a"), lockorder.NewMutex("r21-many-b")
	var wg lockorder.WaitGroup
	wg.Go(func() { lockAB(a, b) })
	wg.Wait()
	lockAB(b, a)
	require.Empty(t, only(lockorder.KindCycle), "ordered so far")
	run(func() { lockAB(a, b) }) // never waited for: concurrent with b -> a
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A Once's function takes a then b; a goroutine whose Do found the Once
// done, holding nothing, takes b then a afterwards.
func TestOrderedByOnce(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-once-a"), lockorder.NewMutex("r21-once-b")
	var once lockorder.Once
	run(func() { once.Do(func() { lockAB(a, b) }) })
	run(func() {
		once.Do(func() { t.Error("ran twice") })
		lockAB(b, a)
	})
	assert.Empty(t, only(lockorder.KindCycle))
}

// A goroutine takes a then b, calls Done, and takes a then b again, while
// the goroutine whose Wait returned takes b then a: the second sighting
// is not ordered, though its chain was cached before.
func TestTakingTheEdgeAgainAfterDoneIsReported(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-again-a"), lockorder.NewMutex("r21-again-b")
	var wg lockorder.WaitGroup
	inverse, done := make(chan struct{}), make(chan struct{})
	wg.Add(1)
	go func() {
		defer close(done)
		lockAB(a, b)
		wg.Done()
		<-inverse
		lockAB(a, b) // after the Done: not before the other's b -> a
	}()
	wg.Wait()
	lockAB(b, a)
	require.Empty(t, only(lockorder.KindCycle), "ordered so far")
	close(inverse)
	<-done
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A goroutine started by WaitGroup.Go after its parent took a then b
// takes b then a: the parent's edge happened before the child's.
func TestOrderedByGoStart(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-fork-a"), lockorder.NewMutex("r21-fork-b")
	run(func() {
		lockAB(a, b)
		var wg lockorder.WaitGroup
		wg.Go(func() { lockAB(b, a) })
		wg.Wait()
	})
	assert.Empty(t, only(lockorder.KindCycle))
}

// The parent takes a then b again while the child it started may run:
// that is a cycle. (The child waits on a channel, which R21 does not see,
// for the parent to be done: the test must not deadlock itself.)
func TestParentTakingTheEdgeAfterGoIsReported(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-par-a"), lockorder.NewMutex("r21-par-b")
	run(func() {
		lockAB(a, b)
		var wg lockorder.WaitGroup
		parentDone := make(chan struct{})
		wg.Go(func() { <-parentDone; lockAB(b, a) })
		lockAB(a, b)
		close(parentDone)
		wg.Wait()
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A goroutine woken by a Cond's Signal is not ordered after what the
// signalling goroutine did: which Signal wakes a waiter, or whether it
// waits at all, is the scheduler's choice, and the order here is the
// mutex's, which R21 does not see.
func TestNotOrderedByACondSignal(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-cond-a"), lockorder.NewMutex("r21-cond-b")
	var mu lockorder.Mutex
	cond := lockorder.NewCond(&mu)
	waiting, ready := false, false
	done := make(chan struct{})
	go func() {
		defer close(done)
		mu.Lock()
		waiting = true
		for !ready {
			cond.Wait()
		}
		mu.Unlock()
		lockAB(b, a)
	}()
	run(func() {
		lockAB(a, b)
		for {
			mu.Lock()
			if waiting { // the other is in Wait: it released mu there
				ready = true
				cond.Signal()
				mu.Unlock()
				return
			}
			mu.Unlock()
			runtime.Gosched()
		}
	})
	<-done
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A goroutine takes a then b, calls Done, and takes a then b again before
// anything made it worth recording (its chain was cached): the goroutine
// whose Wait returned knows only of the first, and its b then a is a
// cycle with the second.
func TestAnUnrecordedSightingAfterDoneIsReported(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21-unrec-a"), lockorder.NewMutex("r21-unrec-b")
	var wg lockorder.WaitGroup
	second := make(chan struct{})
	wg.Add(1)
	go func() {
		lockAB(a, b)
		wg.Done()
		lockAB(a, b) // cached: not recorded
		close(second)
	}()
	<-second // an order syncwatch does not see
	wg.Wait()
	lockAB(b, a)
	assert.Len(t, only(lockorder.KindCycle), 1)
}
