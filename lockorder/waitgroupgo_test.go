//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Goroutines started by WaitGroup.Go that take no lock cost no goroutine
// state, however many run at once: a program that starts a million short
// tasks pays for none.
func TestWaitGroupGoWithoutLocksMakesNoState(t *testing.T) {
	fresh(t)
	before := goroutineStates()
	release := make(chan struct{})
	var started, wg lockorder.WaitGroup
	const n = 2000
	started.Add(n)
	for range n {
		wg.Go(func() {
			started.Done()
			<-release
		})
	}
	started.Wait()
	// Other tests' goroutines may come and go meanwhile: a few states,
	// never one per goroutine started here.
	assert.Less(t, goroutineStates()-before, n/20, "states made by %d running goroutines that took no lock", n)
	close(release)
	wg.Wait()
	assert.Empty(t, lockorder.Violations())
}

// What WaitGroup sees of the goroutines its Go started holds whether each
// found a record in the table kept for them or, its window full, in the
// group's own map: the order of locks their functions take after the
// group, a Wait inside one of them, and the goroutines a blocked Wait
// needs.
func TestWaitGroupGoTracking(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("window-full=%v", full), func(t *testing.T) {
			fill := func(t *testing.T) {
				if full {
					lockorder.SetGoStartedOff(true)
					t.Cleanup(func() { lockorder.SetGoStartedOff(false) })
				}
			}
			t.Run("order", func(t *testing.T) {
				fresh(t)
				fill(t)
				l := lockorder.NewMutex("wgt-l")
				var wg lockorder.WaitGroup
				took := make(chan struct{}) // an order syncwatch does not see (R21)
				wg.Go(func() {              // f takes l: WaitGroup -> l
					l.Lock()
					l.Unlock()
					close(took)
				})
				<-took
				l.Lock() // Wait under l: l -> WaitGroup
				wg.Wait()
				l.Unlock()
				cycles := only(lockorder.KindCycle)
				require.Len(t, cycles, 1)
				// The group is named after the code that made it (its Go).
				assert.Regexp(t, `wgt-l -> WaitGroup lockorder_test\.TestWaitGroupGoTracking\.func\S+ \(waitgroupgo_test\.go:\d+\)`, cycles[0].Message)
			})
			t.Run("wait-at-zero", func(t *testing.T) {
				// f's only call is a Wait on a group at zero: it is still
				// ordered after its own group.
				fresh(t)
				fill(t)
				l := lockorder.NewMutex("wgt-z")
				var outer, inner lockorder.WaitGroup
				// Orders syncwatch does not see (R21): the edges are
				// not ordered before the last.
				took, waited := make(chan struct{}), make(chan struct{})
				inner.Go(func() { l.Lock(); l.Unlock(); close(took) }) // inner -> l
				<-took
				outer.Go(func() { inner.Wait(); close(waited) }) // outer -> inner
				<-waited
				l.Lock()
				outer.Wait() // l -> outer
				l.Unlock()
				require.Len(t, only(lockorder.KindCycle), 1, "l -> outer -> inner -> l")
			})
			t.Run("held-locks", func(t *testing.T) {
				// A place in the group is not a lock f holds.
				fresh(t)
				fill(t)
				l := lockorder.NewMutex("wgt-h")
				var wg lockorder.WaitGroup
				var before, during, after []lockorder.LockRef
				wg.Go(func() {
					before = lockorder.HeldLocks()
					l.Lock()
					during = lockorder.HeldLocks()
					l.Unlock()
					after = lockorder.HeldLocks()
				})
				wg.Wait()
				assert.Empty(t, before)
				require.Len(t, during, 1)
				assert.Equal(t, "wgt-h", during[0].Class)
				assert.Empty(t, after)
			})
			t.Run("wait-inside", func(t *testing.T) {
				reportDeadlocks(t)
				fill(t)
				lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic))
				var wg lockorder.WaitGroup
				var got any
				wg.Go(func() {
					defer func() { got = recover() }()
					wg.Wait() // waits for itself
				})
				wg.Wait()
				require.NotNil(t, got, "the self-wait panics under DeadlockPanic instead of hanging")
				vs := only(lockorder.KindDeadlock)
				require.Len(t, vs, 1)
			})
			t.Run("blockers", func(t *testing.T) {
				reportDeadlocks(t)
				fill(t)
				l := lockorder.NewMutex("wgt-dl")
				var wg lockorder.WaitGroup
				l.Lock()
				wg.Go(func() {
					l.Lock() // blocks: the waiter holds l
					l.Unlock()
				})
				waited := make(chan struct{})
				go func() {
					defer close(waited)
					defer l.Unlock() // break it, reported or not
					v := awaitKind(t, lockorder.KindDeadlock, time.Minute)
					assert.Regexp(t, `waits for WaitGroup lockorder_test\.TestWaitGroupGoTracking\.func\S+ \(waitgroupgo_test\.go:\d+\)`, v.Message)
					assert.Contains(t, v.Message, "lock wgt-dl#")
				}()
				wg.Wait()
				<-waited
			})
		})
	}
}

// A worker started by WaitGroup.Go before y's initialisation write, which
// takes no lock until after it, was there at the write (RULES.md R11): its
// read of y shows y shared, though its goroutine state is made only then.
func TestWaitGroupGoWorkerWitnessesAnInitialisationWrite(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	var wg lockorder.WaitGroup
	w := make(worker)
	wg.Go(func() {
		for f := range w {
			f()
		}
	})
	w.run(func() {}) // started, before the write
	t.Cleanup(func() { close(w); wg.Wait() })
	db := openHeldBack(t)
	w.run(func() { db.y.RLock(); db.y.RUnlock() })
	assert.Len(t, only(lockorder.KindCycle), 1, "a goroutine there before the write shows y shared")
}

// A Wait counts the group's tasks as its progress (W3): its long-wait
// clock restarts each time fewer are left than the monitor last saw
// (internal/waitfor: TestAWaitGroupWaitCountsFromItsLastLow).
func TestWaitGroupWaitCountsItsTasks(t *testing.T) {
	fresh(t)
	var wg lockorder.WaitGroup
	release := make(chan struct{})
	wg.Go(func() { <-release })
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	require.Eventually(t, func() bool { return lockorder.WaitCountsGroup(&wg) }, 10*time.Second, time.Millisecond)
	close(release)
	<-done
	assert.False(t, lockorder.WaitCountsGroup(&wg), "the wait is over")
}
