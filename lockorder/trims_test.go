//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/lockorder"
)

// untilBlocked waits until some goroutine sits in fn (a frame name) and in
// sync's Lock: lockorder has registered its wait. The caller stays busy
// meanwhile (see pollBusy), so that no report on evidence comes before it
// acts.
func untilBlocked(t *testing.T, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	if !pollBusy(func() bool {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, fn) && strings.Contains(g, "sync.(*Mutex).Lock") {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("%s never blocked", fn)
	}
}

func trimmedBlockedLocker(a, b *lockorder.Mutex, done chan struct{}, exit bool) {
	defer close(done)
	a.Lock() // blocks: its state lists only a, whose holder is another goroutine: Stale
	a.AssertHeld()
	b.Lock() // a -> b
	b.Unlock()
	if exit {
		return // exits holding a
	}
	a.Unlock()
}

// waitThroughTrim starts trimmedBlockedLocker blocked on a, held here,
// trims goroutine states while it waits if trim is set, then releases a
// and waits for the locker to return.
func waitThroughTrim(t *testing.T, a, b *lockorder.Mutex, trim, exit bool) {
	t.Helper()
	a.Lock()
	done := make(chan struct{})
	go trimmedBlockedLocker(a, b, done, exit)
	untilBlocked(t, "trimmedBlockedLocker")
	if trim {
		leaveIdleStates()
		gls.Trim()
	}
	a.Unlock()
	<-done
}

// A goroutine waiting in Lock lists the lock it waits for, which another
// holds: its state looks like one that lists only handed-off locks, and a
// trim must keep it, with the hold it then takes.
func TestAWaitingGoroutineKeepsItsStateThroughTrims(t *testing.T) {
	for _, trim := range []bool{false, true} {
		fresh(t)
		var a, b lockorder.Mutex
		waitThroughTrim(t, &a, &b, trim, false)
		assert.Empty(t, only(lockorder.KindNotHeld), "trim=%v: false not-held", trim)
		run(func() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock() }) // b -> a: a real cycle
		assert.Len(t, only(lockorder.KindCycle), 1, "trim=%v: real cycle a->b, b->a", trim)
	}
}

// The same goroutine, exiting with the lock it waited for: the lock is
// reported left held, trim or not.
func TestAWaitingGoroutineThatExitsHoldingIsReported(t *testing.T) {
	for _, trim := range []bool{false, true} {
		fresh(t)
		var a, b lockorder.Mutex
		waitThroughTrim(t, &a, &b, trim, true)
		// Once the goroutine has exited, a look reports the lock it left.
		mine := 0
		pollBusy(func() bool {
			lockorder.ReportBlocked(0)
			mine = 0 // other tests' goroutines may have left locks too
			for _, v := range only(lockorder.KindHeldByExited) {
				if strings.Contains(v.Message, "trims_test.go") {
					mine++
				}
			}
			return mine > 0
		})
		assert.Equal(t, 1, mine, "trim=%v: a left held by an exited goroutine", trim)
		runtime.KeepAlive(&a)
	}
}

// A goroutine remembers the last 8 Onces it saw done: one that saw O done,
// then 8 other Onces, has forgotten O, and must then record no edge for a
// Do of O it cannot wait on (L -> O would close a false cycle with O -> L).
func TestAForgottenOnceRecordsNoEdge(t *testing.T) {
	fresh(t)
	var l lockorder.Mutex
	var o lockorder.Once
	var others [8]lockorder.Once
	run(func() {
		o.Do(func() { l.Lock(); l.Unlock() })
		for i := range others {
			others[i].Do(func() {})
		}
		l.Lock()
		o.Do(func() {})
		l.Unlock()
	})
	assert.Empty(t, only(lockorder.KindCycle))
}

func trimmedOnceWaiter(o *lockorder.Once, l *lockorder.Mutex, done chan struct{}) {
	defer close(done)
	o.Do(func() {}) // waits for the runner's function
	// This goroutine saw o done: a Do of it cannot wait.
	l.Lock()
	o.Do(func() {})
	l.Unlock()
}

// A goroutine waiting in Do for another's function keeps its state through
// a trim, with the Once it then sees done: its later Do under the lock the
// function takes is no cycle.
func TestAOnceWaiterKeepsWhatItSawThroughTrims(t *testing.T) {
	for _, trim := range []bool{false, true} {
		fresh(t)
		var l lockorder.Mutex
		var o lockorder.Once
		inF, release := make(chan struct{}), make(chan struct{})
		go o.Do(func() {
			l.Lock()
			l.Unlock()
			close(inF)
			<-release
		})
		<-inF
		done := make(chan struct{})
		go trimmedOnceWaiter(&o, &l, done)
		untilBlocked(t, "trimmedOnceWaiter")
		if trim {
			leaveIdleStates()
			gls.Trim()
		}
		close(release)
		<-done
		assert.Empty(t, only(lockorder.KindCycle), "trim=%v", trim)
	}
}

// A live goroutine whose lock another goroutine unlocks for it keeps
// locking while trims run: nothing may be reported.
func TestLiveGoroutineWithHandedOffLockUnderTrims(t *testing.T) {
	fresh(t)
	// Enough busy states that every trim looks at the table.
	var hold [80]lockorder.Mutex
	park := make(chan struct{})
	var parked sync.WaitGroup
	for i := range hold {
		parked.Add(1)
		go func() { hold[i].Lock(); parked.Done(); <-park; hold[i].Unlock() }()
	}
	parked.Wait()
	stop := make(chan struct{})
	var trimmer sync.WaitGroup
	trimmer.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				gls.Trim()
				runtime.Gosched()
			}
		}
	})
	var a, b lockorder.Mutex
	var rw lockorder.RWMutex
	handoff := make(chan *lockorder.Mutex)
	handed := make(chan struct{})
	go func() {
		for m := range handoff {
			if m == nil {
				rw.RUnlock()
			} else {
				m.Unlock()
			}
			handed <- struct{}{}
		}
	}()
	var iters int
	for iters < 60 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 50 {
				m := new(lockorder.Mutex)
				m.Lock()
				handoff <- m
				<-handed
				if iters%2 == 0 {
					rw.RLock()
					handoff <- nil
					<-handed
				}
				a.Lock()
				a.AssertHeld()
				b.Lock()
				b.AssertHeld()
				b.Unlock()
				a.AssertHeld()
				a.Unlock()
			}
		}()
		<-done
		iters++
	}
	close(handoff)
	close(stop)
	trimmer.Wait()
	close(park)
	t.Logf("%d rounds", iters)
	kinds := map[lockorder.Kind]int{}
	for _, v := range lockorder.Violations() {
		kinds[v.Kind]++
	}
	assert.Empty(t, kinds)
}

func trimmedBlockedRW(a *lockorder.RWMutex, b *lockorder.Mutex, read bool, done chan struct{}) {
	defer close(done)
	if read {
		a.RLock()
		a.AssertRHeld()
	} else {
		a.Lock()
		a.AssertHeld()
	}
	b.Lock() // a -> b
	b.Unlock()
	if read {
		a.RUnlock()
	} else {
		a.Unlock()
	}
}

func TestAWaitingRWMutexLockerKeepsItsStateThroughTrims(t *testing.T) {
	for _, read := range []bool{false, true} {
		fresh(t)
		var a lockorder.RWMutex
		var b lockorder.Mutex
		a.Lock()
		done := make(chan struct{})
		go trimmedBlockedRW(&a, &b, read, done)
		// Parked in lockorder's wait (a reader on internal/rwlock's
		// channel, a writer in sync's queue), its wait registered.
		require.True(t, pollBusy(func() bool { return parked("trimmedBlockedRW(") }), "read=%v: the locker never blocked", read)
		leaveIdleStates()
		gls.Trim()
		a.Unlock()
		<-done
		run(func() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock() })
		assert.Empty(t, only(lockorder.KindNotHeld), "read=%v", read)
		assert.Len(t, only(lockorder.KindCycle), 1, "read=%v: real cycle", read)
	}
}
