//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// R21's regression tests from its second review: a Cond orders nothing,
// and phases keep their order however many there are.

// whenWaiting returns, holding mu, once *n is at least want (read under
// mu): the Cond waiter that counts its waits in *n is in Wait, having
// released mu.
func whenWaiting(mu *lockorder.Mutex, n *int, want int) {
	for {
		mu.Lock()
		if *n >= want {
			return
		}
		mu.Unlock()
		runtime.Gosched()
	}
}

// A Cond wake is no order the program's other runs keep: a waiter loops on
// its condition, and a wake only tells it to look again; which goroutine
// wakes it is the scheduler's choice.
//
// The waiter waits for ready. s starts once it waits, takes a then b, and
// broadcasts a notice that does not make ready true; t, once s has (a
// channel), sets ready and broadcasts. In this run s's Broadcast may wake
// the waiter, it waits again, and t lets it through. In the run where t
// runs while s is between a and b, t's Broadcast wakes the waiter, which
// takes b then waits for a, while s holds a and waits for b: a deadlock.
func TestACondWakeThatDidNotLetTheWaiterThroughOrdersNothing(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21b-spur-a"), lockorder.NewMutex("r21b-spur-b")
	var mu lockorder.Mutex
	cond := lockorder.NewCond(&mu)
	waits, ready := 0, false
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // the waiter
		defer wg.Done()
		mu.Lock()
		for !ready {
			waits++
			cond.Wait()
		}
		mu.Unlock()
		lockAB(b, a)
	}()
	noticed := make(chan struct{})
	go func() { // s
		defer wg.Done()
		whenWaiting(&mu, &waits, 1)
		mu.Unlock()
		lockAB(a, b)
		mu.Lock()
		cond.Broadcast() // "something changed"
		mu.Unlock()
		close(noticed)
	}()
	go func() { // t
		defer wg.Done()
		<-noticed
		mu.Lock()
		ready = true
		cond.Broadcast()
		mu.Unlock()
	}()
	wg.Wait()
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// The same with Signal and a queue that two producers fill: the consumer
// is woken by s's Signal in this run, and takes t's job in the run where
// t pushes while s is between a and b.
func TestACondSignalFromOneOfTwoProducersOrdersNothing(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21b-prod-a"), lockorder.NewMutex("r21b-prod-b")
	var mu lockorder.Mutex
	cond := lockorder.NewCond(&mu)
	waits, jobs := 0, 0
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // the consumer: one job
		defer wg.Done()
		mu.Lock()
		for jobs == 0 {
			waits++
			cond.Wait()
		}
		jobs--
		mu.Unlock()
		lockAB(b, a)
	}()
	push := func() {
		mu.Lock()
		jobs++
		cond.Signal()
		mu.Unlock()
	}
	pushed := make(chan struct{})
	go func() { // s
		defer wg.Done()
		whenWaiting(&mu, &waits, 1)
		mu.Unlock()
		lockAB(a, b)
		push()
		close(pushed)
	}()
	go func() { // t
		defer wg.Done()
		<-pushed
		push()
	}()
	wg.Wait()
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// Precision: phases in a loop, each on a pair of locks of its own, each
// edge taken by 4 goroutines (well under hb.MaxSighters). The starter
// takes a then b, starts 4 workers with WaitGroup.Go that take b then a,
// and waits for them. Every round is ordered (the workers inherit the
// starter's clock). But the starter's clock accumulates every worker it
// waited for; past hb.MaxEntries goroutines Join keeps the largest
// ids, and the starter's own id is the smallest: from then on, the clock
// it forks to its workers no longer names the starter itself, and the
// round is reported. The rounds go past that bound (internal/hb pins
// the clock's part: TestForkPastTheBoundKnowsTheStarter).
func TestManyPhasesKeepTheStartersOwnEntry(t *testing.T) {
	fresh(t)
	run(func() {
		var wg lockorder.WaitGroup
		for round := range 3 + lockorder.MaxClockEntries/4 {
			a := lockorder.NewMutex(fmt.Sprintf("r21b-many-a%d", round))
			b := lockorder.NewMutex(fmt.Sprintf("r21b-many-b%d", round))
			lockAB(a, b)
			for range 4 {
				wg.Go(func() { lockAB(b, a) })
			}
			wg.Wait()
			assert.Empty(t, only(lockorder.KindCycle), "round %d", round)
		}
	})
}

// Precision: one persistent worker across many phases (as many as the
// sightings a Sight keeps of one goroutine, 32; past them its oldest are
// merged and order less: docs/RULES.md R21). Each phase: the worker takes a
// then b and is waited for; the main goroutine takes b then a, then lets
// the worker go on. Every pair of sightings is ordered.
func TestAPersistentWorkerAcrossManyPhasesIsOrdered(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("r21b-pw-a"), lockorder.NewMutex("r21b-pw-b")
	const phases = 32
	done := make([]lockorder.WaitGroup, phases)
	start := make([]lockorder.WaitGroup, phases)
	for i := range phases {
		done[i].Add(1)
		start[i].Add(1)
	}
	go func() {
		for i := range phases {
			if i > 0 {
				start[i-1].Wait()
			}
			lockAB(a, b)
			done[i].Done()
		}
	}()
	for i := range phases {
		done[i].Wait()
		lockAB(b, a)
		assert.Empty(t, only(lockorder.KindCycle), "phase %d", i)
		start[i].Done()
	}
}
