//go:build !syncwatch_off

package lockorder_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

func TestOnceRunsOnceAndEveryDoWaitsForIt(t *testing.T) {
	fresh(t)
	var once lockorder.Once
	var calls atomic.Int32
	release := make(chan struct{})
	done := make(chan struct{}, 8)
	for range 8 {
		go func() {
			once.Do(func() {
				calls.Add(1)
				<-release
			})
			done <- struct{}{}
		}()
	}
	close(release)
	for range 8 {
		<-done
	}
	assert.EqualValues(t, 1, calls.Load())
	once.Do(func() { t.Error("ran twice") })
	assert.Empty(t, lockorder.Violations())
}

func TestOncePanicCountsAsDone(t *testing.T) {
	fresh(t)
	var once lockorder.Once
	assert.Panics(t, func() { once.Do(func() { panic("boom") }) })
	once.Do(func() { t.Error("ran after a panic") })
}

func TestOnceDoUnderLockWhileFTakesItIsACycle(t *testing.T) {
	fresh(t)
	l := lockorder.NewMutex("once-l")
	var once lockorder.Once
	run(func() { // f takes l: Once -> l
		once.Do(func() {
			l.Lock()
			l.Unlock()
		})
	})
	run(func() { // Do under l: l -> Once (done now, but it would wait)
		l.Lock()
		once.Do(func() {})
		l.Unlock()
	})
	cycles := only(lockorder.KindCycle)
	require.Len(t, cycles, 1)
	// The Once is named after the code that first called its Do; in the
	// message, after the code that took it in the cycle (Do under l).
	assert.Regexp(t, `^Once lockorder_test.TestOnceDoUnderLockWhileFTakesItIsACycle.func1 \(drop_in_test.go:\d+\)#\d+$`, cycles[0].Locks[1].Name)
	assert.Contains(t, cycles[0].Message, "once-l -> Once lockorder_test.TestOnceDoUnderLockWhileFTakesItIsACycle.func2 (drop_in_test.go:")
}

func TestOnceDoInsideItsOwnFunctionIsADeadlock(t *testing.T) {
	reportDeadlocks(t)
	lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic))
	var once lockorder.Once
	var got any
	func() {
		defer func() { got = recover() }()
		once.Do(func() { once.Do(func() {}) })
	}()
	require.NotNil(t, got, "the self-wait panics under DeadlockPanic instead of hanging")
	vs := only(lockorder.KindDeadlock)
	require.Len(t, vs, 1)
}

func TestWaitGroupWaitsForAddAndGo(t *testing.T) {
	fresh(t)
	var wg lockorder.WaitGroup
	var n atomic.Int32
	for range 10 {
		wg.Go(func() { n.Add(1) })
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.Add(1)
	}()
	wg.Wait()
	assert.EqualValues(t, 11, n.Load())
	wg.Wait() // at zero: returns at once
	assert.Panics(t, func() { wg.Done() }, "a negative counter panics, as in sync")
}

func TestCondSignalAndBroadcast(t *testing.T) {
	fresh(t)
	var mu lockorder.Mutex
	c := lockorder.NewCond(&mu)
	ready := 0
	woken := make(chan struct{}, 3)
	for range 3 {
		go func() {
			mu.Lock()
			for ready == 0 {
				c.Wait()
			}
			ready--
			mu.Unlock()
			woken <- struct{}{}
		}()
	}
	mu.Lock()
	ready = 1
	mu.Unlock()
	c.Signal()
	<-woken
	mu.Lock()
	ready = 2
	mu.Unlock()
	c.Broadcast()
	<-woken
	<-woken
	assert.Empty(t, lockorder.Violations())
}
