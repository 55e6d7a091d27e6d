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

// underGroup runs f in a function Go'd on a new group whose Wait was seen
// holding first for writing: what f takes while the group's read hold
// is held closes the cycle first -> group -> what f takes at that
// acquisition. A group's hold is never another goroutine's to release,
// so its edges are added at once; those from a Mutex's hold wait for the
// Unlock (RULES.md R23), and a cycle they close is reported there.
func underGroup(first sync.Locker, f func()) {
	var g lockorder.WaitGroup
	run(func() { first.Lock(); g.Wait(); first.Unlock() }) // first -> g
	g.Go(f)
	g.Wait()
}

func TestHandlerThatPanicsLeavesStateConsistent(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) { panic(v.Kind) }))
	a, b := lockorder.NewMutex("panicA"), lockorder.NewMutex("panicB")
	var recovered any
	underGroup(a, func() {
		defer func() { recovered = recover() }()
		a.Lock() // the cycle is reported before a is taken: the panic leaves a free
		t.Error("Lock returned after the handler panicked")
	})
	assert.Equal(t, lockorder.KindCycle, recovered)
	require.True(t, a.TryLock(), "a must not be left locked")
	a.Unlock()
	// The goroutine's held stack is clean: a fresh sequence records fine.
	run(func() { lockAB(a, b) })
	assert.Len(t, lockorder.Violations(), 1)
}

// A cycle closed by an edge from a Mutex's hold is reported at that
// hold's Unlock (R23), once the Mutex is unlocked: a handler that panics
// there leaves it free, and the goroutine's state clean.
func TestHandlerThatPanicsAtAnUnlockLeavesStateConsistent(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) { panic(v.Kind) }))
	a, b, c := lockorder.NewMutex("panicUA"), lockorder.NewMutex("panicUB"), lockorder.NewMutex("panicUC")
	run(func() { lockAB(a, b) })
	var recovered any
	var held []lockorder.LockRef
	run(func() {
		func() {
			defer func() { recovered = recover() }()
			b.Lock()
			a.Lock() // b -> a waits for b's Unlock
			a.Unlock()
			b.Unlock() // reports the cycle, b unlocked
			t.Error("Unlock returned after the handler panicked")
		}()
		held = lockorder.HeldLocks()
	})
	assert.Equal(t, lockorder.KindCycle, recovered)
	assert.Empty(t, held)
	require.True(t, b.TryLock(), "b must not be left locked")
	b.Unlock()
	run(func() { lockAB(b, c) })
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

// The handler sees a violation as it is recorded: with the ID Violations
// gives it, numbered from 1.
func TestHandlerSeesTheRecordedID(t *testing.T) {
	fresh(t)
	var mu sync.Mutex
	var got []uint64
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		mu.Lock()
		got = append(got, v.ID)
		mu.Unlock()
	}))
	lockorder.Report(lockorder.Violation{Kind: "custom", Message: "first"})
	lockorder.Report(lockorder.Violation{Kind: "custom", Message: "second"})
	vs := only("custom")
	require.Len(t, vs, 2)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []uint64{vs[0].ID, vs[1].ID}, got)
	assert.NotZero(t, got[0])
	assert.Less(t, got[0], got[1])
}

// RLock takes the read lock with its first atomic add, before any check.
// When the checks may report (something else is held), it hands the read
// back first: a handler runs without it, as with Mutex, and may write-lock
// the very RWMutex being read-locked.
func TestHandlerRunsWithoutTheReadLockBeingTaken(t *testing.T) {
	fresh(t)
	rw := lockorder.NewRWMutex("hrRW")
	var wrote bool
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindCycle {
			rw.Lock() // would deadlock if the reporting goroutine held rw
			wrote = true
			rw.Unlock()
		}
	}))
	rw.RLock() // rw in use: its write below is no initialisation write
	rw.RUnlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		underGroup(rw, func() { // rw (write) then the group; the group then rw (read) closes the cycle
			rw.RLock()
			assert.False(t, rw.TryLock(), "RLock returned without the read lock")
			rw.RUnlock()
		})
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

// The same while a writer holds the RWMutex: the reporting goroutine is
// not left counted as a reader waiting for it, so a handler that
// write-locks it gets in once the writer is done, and a handler that
// panics leaves no phantom reader behind.
func TestHandlerRunsWithoutAPendingRead(t *testing.T) {
	for _, panics := range []bool{false, true} {
		fresh(t)
		rw := lockorder.NewRWMutex("hpRW")
		inHandler := make(chan struct{}, 1)
		lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
			if v.Kind != lockorder.KindCycle {
				return
			}
			inHandler <- struct{}{}
			if panics {
				panic(v.Kind)
			}
			rw.Lock()
			rw.Unlock()
		}))
		var g lockorder.WaitGroup
		run(func() { rw.Lock(); g.Wait(); rw.Unlock() }) // rw (write) then g (see underGroup)
		held, release, writerDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(writerDone)
			rw.Lock()
			close(held)
			<-release
			rw.Unlock()
		}()
		<-held
		done := make(chan struct{})
		g.Go(func() { // g then rw (read) while the writer holds rw: closes the cycle
			defer close(done)
			defer func() { recover() }()
			rw.RLock()
			rw.RUnlock()
		})
		<-inHandler
		close(release)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("panics=%v: hung: the handler's rw.Lock waited for the reporting goroutine's pending read", panics)
		}
		<-writerDone
		g.Wait()
		// No reader is left counted: rw can be write-locked now, and soon.
		got := make(chan struct{})
		go func() {
			rw.Lock()
			rw.Unlock()
			close(got)
		}()
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("panics=%v: rw.Lock hangs on a free RWMutex: a reader is still counted", panics)
		}
	}
}
