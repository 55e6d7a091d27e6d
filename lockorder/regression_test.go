//go:build !syncwatch_off

// Regressions found by an independent review of the engine: each failed
// before its fix.

package lockorder_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Found in review (1): same-class instance edges hidden by the chain cache. The held entry's
// chain element is class-level, so "store#3 held, take store#2" has the same
// chain key as "store#1 held, take store#2" and the edge #3->#2 is never
// recorded. #2->#3 later closes a real cycle that is not reported.
func TestRegressionSameClassInstanceEdgeHiddenByChainCache(t *testing.T) {
	fresh(t)
	s1, s2, s3 := lockorder.NewMutex("rstore"), lockorder.NewMutex("rstore"), lockorder.NewMutex("rstore")
	run(func() { lockAB(s1, s2) }) // edge #1 -> #2
	run(func() { lockAB(s3, s2) }) // edge #3 -> #2 (chain key collides)
	run(func() { lockAB(s2, s3) }) // edge #2 -> #3: closes #3 -> #2 -> #3
	require.Len(t, only(lockorder.KindCycle), 1, "store#3/store#2 taken in both orders")
}

// Control: without the first (unrelated) pair, the same inversion is found.
func TestRegressionSameClassInstanceControl(t *testing.T) {
	fresh(t)
	s1, s2, s3 := lockorder.NewMutex("rstore2"), lockorder.NewMutex("rstore2"), lockorder.NewMutex("rstore2")
	_ = s1
	run(func() { lockAB(s3, s2) })
	run(func() { lockAB(s2, s3) })
	require.Len(t, only(lockorder.KindCycle), 1)
}

// Found in review (2): a gate is an instance, but the chain key only has the gate's class.
// a->b under gate#2 hits the cached chain of a->b under gate#1, so the
// edge's gate stays {gate#1} and the inversion b->a under gate#1 is
// suppressed, though gate#2 and gate#1 do not serialize anything.
func TestRegressionGateInstanceHiddenByChainCache(t *testing.T) {
	fresh(t)
	g1, g2 := lockorder.NewMutex("rgate"), lockorder.NewMutex("rgate")
	a, b := lockorder.NewMutex("rgA"), lockorder.NewMutex("rgB")
	gated := func(g, x, y sync.Locker) { g.Lock(); lockAB(x, y); g.Unlock() }
	run(func() { gated(g1, a, b) })
	run(func() { gated(g2, a, b) }) // holds gate#2 while taking a then b
	run(func() { gated(g1, b, a) })
	// goroutine holding g2,a waiting for b + goroutine holding g1,b waiting for a: deadlock.
	require.Len(t, only(lockorder.KindCycle), 1)
}

// F2 control: same but the second sighting is without the cache hit.
func TestRegressionGateInstanceControl(t *testing.T) {
	fresh(t)
	g1, g2 := lockorder.NewMutex("rgate2"), lockorder.NewMutex("rgate2")
	a, b := lockorder.NewMutex("rgA2"), lockorder.NewMutex("rgB2")
	gated := func(g, x, y sync.Locker) { g.Lock(); lockAB(x, y); g.Unlock() }
	run(func() { gated(g2, a, b) })
	run(func() { gated(g1, b, a) })
	require.Len(t, only(lockorder.KindCycle), 1)
}

// Found in review (3): TryLock after a hand-off revives the stale entry of the first Lock:
// tryAcquired neither prunes nor checks, and sets holder back to this
// goroutine, so the old entry becomes valid again and outlives the Unlock.
func TestRegressionTryLockAfterHandOffRevivesStaleEntry(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("rhand")
	run(func() {
		m.Lock()
		run(func() { m.Unlock() }) // hand-off: released by another goroutine
		require.True(t, m.TryLock())
		m.Unlock()
		// m is not locked and this goroutine holds nothing.
		if h := lockorder.HeldLocks(); len(h) > 0 {
			t.Errorf("nothing is held, HeldLocks = %v", h)
		}
		m.Lock() // not recursive
		m.Unlock()
	})
	for _, v := range lockorder.Violations() {
		t.Errorf("false report: %s: %s", v.Kind, v.Message)
	}
}

// Found in review (4): RLockContext that times out leaves its pending read entry on the
// stack while the wait-timeout handler runs: a lock the handler takes gets
// an edge from a lock never acquired (false cycle), and if the handler
// panics the entry is never popped (false recursive-rlock later).
func TestRegressionRLockContextTimeoutHandlerPanicLeavesEntry(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rctx")
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { defer close(done); m.Lock(); close(locked); <-release; m.Unlock() }()
	<-locked
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindWaitTimeout {
			panic("handler")
		}
	}))
	defer lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	run(func() {
		func() {
			defer func() { recover() }()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_ = m.RLockContext(ctx)
		}()
		require.Empty(t, lockorder.HeldLocks(), "RLockContext failed: nothing held")
	})
	close(release)
	<-done
}

func TestRegressionRLockContextTimeoutHandlerTakesLock(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("rctx2")
	x := lockorder.NewMutex("rctxX")
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { defer close(done); m.Lock(); close(locked); <-release; m.Unlock() }()
	<-locked
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindWaitTimeout {
			x.Lock() // e.g. a handler that appends to a guarded list
			x.Unlock()
		}
	}))
	defer lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	run(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		require.Error(t, m.RLockContext(ctx))
	})
	close(release)
	<-done
	run(func() { lockAB(x, m) }) // x then m: fine, m was never held with x
	require.Empty(t, only(lockorder.KindCycle))
}
