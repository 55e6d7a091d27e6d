//go:build !syncwatch_off

package lockorder_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

func TestHandlerThatPanicsLeavesStateConsistent(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) { panic(v.Kind) }))
	a, b := lockorder.NewMutex("panicA"), lockorder.NewMutex("panicB")
	run(func() { lockAB(a, b) })
	var recovered any
	run(func() {
		defer func() { recovered = recover() }()
		b.Lock()
		defer b.Unlock()
		a.Lock() // the cycle is reported before a is taken: the panic leaves a free
		t.Error("Lock returned after the handler panicked")
	})
	assert.Equal(t, lockorder.KindCycle, recovered)
	require.True(t, a.TryLock(), "a must not be left locked")
	a.Unlock()
	require.True(t, b.TryLock(), "b was released by the deferred Unlock")
	b.Unlock()
	// The goroutine's held stack is clean: a fresh sequence records fine.
	run(func() { lockAB(a, b) })
	assert.Len(t, lockorder.Violations(), 1)
}

func TestHandlerThatTakesWatchedLocks(t *testing.T) {
	fresh(t)
	var logMu lockorder.Mutex
	var log []lockorder.Kind
	a, b := lockorder.NewMutex("hlA"), lockorder.NewMutex("hlB")
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		logMu.Lock()
		defer logMu.Unlock()
		log = append(log, v.Kind)
		_ = lockorder.Violations() // reading the records from a handler is fine
		a.AssertHeld()             // this reports (a is not held yet), but not back to this handler
	}))
	run(func() { lockAB(a, b) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		lockAB(b, a)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a handler that locks a watched mutex hung the program")
	}
	logMu.Lock()
	defer logMu.Unlock()
	assert.Equal(t, []lockorder.Kind{lockorder.KindCycle}, log, "the handler is not re-entered")
	require.Len(t, lockorder.Violations(), 2, "what the handler caused is still recorded")
	assert.Equal(t, lockorder.KindNotHeld, lockorder.Violations()[1].Kind)
}

func TestHandlerSeesEachViolationOnce(t *testing.T) {
	fresh(t)
	var mu sync.Mutex
	count := map[lockorder.Kind]int{}
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		mu.Lock()
		count[v.Kind]++
		mu.Unlock()
	}))
	a, b := lockorder.NewMutex("onceA"), lockorder.NewMutex("onceB")
	run(func() { lockAB(a, b) })
	// Many goroutines close the same cycle at once (all in the same order,
	// so they cannot really deadlock): one report.
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			<-start
			for range 100 {
				lockAB(b, a)
			}
		})
	}
	close(start)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, count[lockorder.KindCycle])
}

// RLock takes the read lock with its first atomic add, before any check.
// When the checks may report (something else is held), it hands the read
// back first: a handler runs without it, as with Mutex, and may write-lock
// the very RWMutex being read-locked.
func TestHandlerRunsWithoutTheReadLockBeingTaken(t *testing.T) {
	fresh(t)
	m, rw := lockorder.NewMutex("hrM"), lockorder.NewRWMutex("hrRW")
	var wrote bool
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindCycle {
			rw.Lock() // would deadlock if the reporting goroutine held rw
			wrote = true
			rw.Unlock()
		}
	}))
	run(func() { // rw (write) then m
		rw.Lock()
		m.Lock()
		m.Unlock()
		rw.Unlock()
	})
	done := make(chan struct{})
	go func() { // m then rw (read): closes the cycle
		defer close(done)
		m.Lock()
		rw.RLock()
		assert.False(t, rw.TryLock(), "RLock returned without the read lock")
		rw.RUnlock()
		m.Unlock()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a handler that write-locks the RWMutex being read-locked hung")
	}
	assert.True(t, wrote)
	require.Len(t, only(lockorder.KindCycle), 1)
	assert.True(t, rw.TryLock(), "rw left locked")
	rw.Unlock()
}
