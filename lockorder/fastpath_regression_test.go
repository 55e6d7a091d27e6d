//go:build !syncwatch_off

package lockorder_test

// Regression tests from an independent review of the inlined fast paths,
// the stack captured in the Lock method's own frame and the wait
// profile's per-lock counters.

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

//go:noinline
func lockDirect(m *lockorder.Mutex) { m.Lock() } // Lock inlined here

//go:noinline
func rLockDirect(m *lockorder.RWMutex) { m.RLock() }

//go:noinline
func lockNested(a, b *lockorder.Mutex) {
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
}

// With Lock inlined into its caller, the held profile still starts at that
// caller.
func TestHeldProfileStartsAtTheCallerOfAnInlinedLock(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithHeldProfile(true))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	m, rw := lockorder.NewMutex("revHeldM"), lockorder.NewRWMutex("revHeldRW")
	lockDirect(m)
	rLockDirect(rw)
	for _, fn := range []string{"lockorder_test.lockDirect", "lockorder_test.rLockDirect"} {
		ss := liveSamples(t, lockorder.HeldProfileName, fn)
		require.Len(t, ss, 1, fn)
		assert.True(t, strings.HasSuffix(functions(ss[0])[0], fn), "%s: %v", fn, functions(ss[0]))
	}
	m.Unlock()
	rw.RUnlock()
}

// An edge's stack, captured in the Lock method, starts at its caller.
func TestCycleEdgeStackStartsAtTheCaller(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("revA"), lockorder.NewMutex("revB")
	run(func() { lockNested(a, b) })
	run(func() { lockNested(b, a) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	require.NotEmpty(t, vs[0].Stack)
	assert.Contains(t, vs[0].Stack[0].Function, "lockNested", "%v", vs[0].Stack)
}

// A handler that takes the very mutex being locked, then releases it.
func TestHandlerMayLockTheMutexBeingLocked(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("revSameA"), lockorder.NewMutex("revSameB")
	var calls int
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		calls++
		a.Lock()
		a.Unlock()
	}))
	run(func() { lockNested(a, b) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		lockNested(b, a)
		assert.Empty(t, lockorder.HeldLocks())
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("hang")
	}
	assert.Equal(t, 1, calls)
}

// A handler that panics during an RLock's new chain: nothing is left held.
func TestHandlerPanicDuringRLockLeavesNothingHeld(t *testing.T) {
	fresh(t)
	rw := lockorder.NewRWMutex("revPRW")
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) { panic("boom") }))
	rw.RLock() // rw in use: its write below is no initialisation write
	rw.RUnlock()
	var rec any
	var held []lockorder.LockRef
	underGroup(rw, func() {
		func() {
			defer func() { rec = recover() }()
			rw.RLock() // closes rw -> group -> rw (read)
		}()
		held = lockorder.HeldLocks()
	})
	require.Equal(t, "boom", rec)
	for _, h := range held {
		assert.NotContains(t, h.Name, "revPRW", "rw is left held")
	}
	require.True(t, rw.TryLock())
	rw.Unlock()
}

// Locks taken in one mode and released in another report nothing.
func TestLocksReleasedInAnotherModeReportNothing(t *testing.T) {
	fresh(t)
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	m, rw := lockorder.NewMutex("revModeM"), lockorder.NewRWMutex("revModeRW")
	run(func() {
		m.Lock()
		rw.RLock()
		lockorder.Configure(lockorder.WithMode(lockorder.ModeOff))
		rw.RUnlock()
		m.Unlock() // fast paths
		m.Lock()
		rw.RLock()
		lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
		rw.RUnlock()
		m.Unlock()
		m.Lock()
		rw.RLock()
		rw.RUnlock()
		m.Unlock()
	})
	assert.Empty(t, lockorder.Violations())
}

// Resets racing with waits leave the profile exact once they stop.
func TestWaitProfileSurvivesConcurrentResets(t *testing.T) {
	freshWaitProfile(t, time.Hour)
	m := lockorder.NewMutex("revConcReset")
	var wg sync.WaitGroup
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				lockorder.ResetWaitProfile()
			}
		}
	}()
	for range 4 {
		wg.Go(func() { lockorder.RecordWaitsOn(m, 20000, time.Microsecond) })
	}
	wg.Wait()
	close(stop)
	<-stopped
	lockorder.ResetWaitProfile()
	lockorder.RecordWaitsOn(m, 7, time.Millisecond)
	ss := samplesOf(waitProfile(t), nameOf(t, m))
	require.Len(t, ss, 1)
	assert.Equal(t, []int64{7, int64(7 * time.Millisecond)}, ss[0].Value)
}

// TestCachedNestedPathLeavesANothingHeldLockAlone: the cached nested
// path (enterSeen) is for a Lock under holds. A Lock with nothing held
// also takes Mutex.lockSlow's acquisition path when its class is written
// but not settled (every write so far under another write lock); looking
// its chain up there advanced the goroutine's epoch (R21) where the
// acquisition path does not, and a cycle the WaitGroup orders (A->B
// before Done, B->A after Wait) was reported. From an independent review.
func TestCachedNestedPathLeavesANothingHeldLockAlone(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("cnA"), lockorder.NewMutex("cnB")
	m, x := lockorder.NewMutex("cnM"), lockorder.NewMutex("cnX")
	var wg lockorder.WaitGroup
	run(func() { // cnM's class: written, only ever under a write lock
		x.Lock()
		m.Lock()
		m.Unlock()
		x.Unlock()
	})
	wg.Add(1)
	ready, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { // G
		defer close(done)
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
		wg.Done()
		m.Lock() // nothing held, its class not settled
		close(ready)
		<-release
		m.Unlock()
	}()
	run(func() {
		wg.Wait()
		<-ready
		b.Lock()
		a.Lock()
		a.Unlock()
		b.Unlock()
	})
	close(release)
	<-done
	assert.Empty(t, only(lockorder.KindCycle), "the WaitGroup orders A->B before B->A")
}
