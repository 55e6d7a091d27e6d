package lockorder_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
)

// goroutineStates is how many goroutine states the engine keeps.
func goroutineStates() int {
	n, _, _, _ := gls.Stats()
	return n
}

// 20,000 goroutines alive at once, each locking a mutex of its own: no
// goroutine dump is taken (a dump stops the world for as long as there are
// goroutines), and the states stay bounded, though none has exited.
func TestManyLiveGoroutinesLockWithoutDump(t *testing.T) {
	fresh(t)
	const n = 20000
	ms := make([]*lockorder.Mutex, n)
	for i := range ms {
		ms[i] = new(lockorder.Mutex)
	}
	dumps := waitfor.DumpCount()
	release := make(chan struct{})
	var locked, done sync.WaitGroup
	for _, m := range ms {
		locked.Add(1)
		done.Go(func() {
			m.Lock()
			m.Unlock()
			locked.Done()
			<-release
		})
	}
	locked.Wait()
	assert.LessOrEqual(t, goroutineStates(), 1<<13+n/10, "states for %d idle goroutines", n)
	close(release)
	done.Wait()
	assert.Equal(t, dumps, waitfor.DumpCount(), "goroutine dumps taken on the lock path")
	assert.Empty(t, lockorder.Violations())
}

// Goroutines that use every primitive come and go: every call leaves the
// goroutine's state idle once it holds nothing, so that once they are gone
// a trim leaves only a few states. A state left busy by some call would
// stay for good.
func TestStatesStayBoundedAsGoroutinesComeAndGo(t *testing.T) {
	fresh(t)
	var (
		mu   lockorder.Mutex
		rw   lockorder.RWMutex
		held lockorder.Mutex
	)
	held.Lock()
	defer held.Unlock()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	use := func() {
		mu.Lock()
		mu.Unlock()
		if mu.TryLock() {
			mu.Unlock()
		}
		rw.RLock()
		rw.RUnlock()
		rw.Lock()
		rw.Unlock()
		var wg lockorder.WaitGroup
		wg.Go(func() {
			mu.Lock()
			mu.Unlock()
		})
		wg.Wait()
		var once lockorder.Once
		once.Do(func() {})
		once.Do(func() {}) // done: no wait, nothing held
		rw.RLock()
		mu.Lock() // nested
		mu.Unlock()
		rw.RUnlock()
		if rw.TryRLock() {
			rw.RUnlock()
		}
		assert.NoError(t, mu.LockContext(context.Background()))
		mu.Unlock()
		c := lockorder.NewCond(&mu)
		c.Signal()
		c.Broadcast()
		assert.Error(t, held.LockContext(canceled))
	}
	var done lockorder.Once
	done.Do(func() {})
	for range 5 {
		var wg sync.WaitGroup
		for range 2000 {
			wg.Go(use)
			// A goroutine whose only call is a Do on a done Once.
			wg.Go(func() { done.Do(func() {}) })
		}
		wg.Wait()
	}
	gls.Trim()
	require.LessOrEqual(t, goroutineStates(), 200, "states left after 20,000 goroutines came and went")
}

// A goroutine started by WaitGroup.Go gives up its state as it returns, so
// goroutines that come and go through Go leave no state behind, with no
// trim needed.
func TestWaitGroupGoLeavesNoState(t *testing.T) {
	fresh(t)
	var mu lockorder.Mutex
	mu.Lock()
	mu.Unlock()
	before := goroutineStates()
	var wg lockorder.WaitGroup
	for range 20000 {
		wg.Go(func() {
			mu.Lock()
			mu.Unlock()
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, goroutineStates(), before, "states left by 20,000 goroutines started by Go")
	assert.Empty(t, lockorder.Violations())
}

// leaveIdleStates leaves more idle goroutine states than a trim keeps, so
// that the next trim drops idle ones.
func leaveIdleStates() {
	var mu lockorder.Mutex
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			mu.Lock()
			mu.Unlock()
		})
	}
	wg.Wait()
}

// A goroutine that saw a Once done (it ran the function, which takes L)
// later calls Do on it holding L: correct, since it cannot wait. A trim in
// between drops the goroutine's idle state, and must not take with it the
// memory of the Once seen done: the Do then would record L -> Once, a false
// cycle with Once -> L.
func TestOnceSeenDoneSurvivesATrim(t *testing.T) {
	for _, trim := range []bool{false, true} {
		fresh(t)
		var l lockorder.Mutex
		var o lockorder.Once
		done := make(chan struct{})
		go func() {
			defer close(done)
			o.Do(func() {
				l.Lock()
				l.Unlock()
			})
			if trim {
				leaveIdleStates()
				gls.Trim()
			}
			l.Lock()
			o.Do(func() {})
			l.Unlock()
		}()
		<-done
		assert.Empty(t, lockorder.Violations(), "trim=%v", trim)
	}
}

// Goroutines that lock a mutex and exit, another goroutine unlocking it for
// them (legal): their states, which list only locks released for them, are
// freed by a trim once there are as many as goroutines (at least 1,024:
// each such freeing takes a goroutine dump), so at most that many stay,
// and nothing is reported.
func TestHandedOffHoldsLeaveNoState(t *testing.T) {
	fresh(t)
	leaveIdleStates()
	gls.Trim()
	before := goroutineStates()
	// The states are freed once there are as many as goroutines (at least
	// 1,024): this test binary keeps goroutines other tests left blocked,
	// so it makes twice that many, and more.
	live := runtime.NumGoroutine()
	bound := max(1024, live)
	n := 2*bound + 1000
	for range n {
		var m lockorder.Mutex
		done := make(chan struct{})
		go func() {
			m.Lock()
			close(done)
		}()
		<-done
		m.Unlock() // on behalf of the exited goroutine
	}
	// A goroutine that closed done may not have exited yet on a loaded
	// machine: the trim frees only the states of goroutines gone, and
	// dumps only once they outnumber the goroutines.
	awaitGoroutines(live)
	gls.Trim()
	assert.LessOrEqual(t, goroutineStates()-before, bound, "states left by %d hand-offs", n)
	lockorder.ReportBlocked(0)
	assert.Empty(t, lockorder.Violations())
}

// awaitGoroutines waits until no more than n goroutines are alive (those
// a test started have exited), or pollLimit has passed: a goroutine that
// something else started meanwhile must not hang the test, which then
// asserts on what it finds.
func awaitGoroutines(n int) {
	pollBusy(func() bool { return runtime.NumGoroutine() <= n })
}
