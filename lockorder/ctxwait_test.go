package lockorder_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The LockContext tests that hold in both builds: a wait given up on a
// lock that is never released leaves at most one goroutine behind per
// concurrent waiter, not one per attempt, and none at all where the wait
// itself can be given up (RLockContext).

// ctxLock is one way of waiting with a context, on a lock some other
// goroutine can hold.
type ctxLock struct {
	name    string
	hold    func()                      // by the holder
	release func()                      // by the holder
	wait    func(context.Context) error // by the waiter
	undo    func()                      // releases what wait took
	try     func() bool                 // whether the lock is free: takes and releases it
	// helpers is how many helpers abandoned waits leave queued while the
	// holder keeps the lock: 1 on a sync lock (a writer waits for the
	// writers' queue, a sync.Mutex), 0 where the wait is given up in place.
	helpers int
}

func ctxLocks() []ctxLock {
	m := lockorder.NewMutex("ctxwait.m")
	rw := lockorder.NewRWMutex("ctxwait.rw")
	rw2 := lockorder.NewRWMutex("ctxwait.rw2")
	tryM := func() bool {
		if m.TryLock() {
			m.Unlock()
			return true
		}
		return false
	}
	tryRW := func(rw *lockorder.RWMutex) func() bool {
		return func() bool {
			if rw.TryLock() {
				rw.Unlock()
				return true
			}
			return false
		}
	}
	return []ctxLock{
		{"Mutex.LockContext", m.Lock, m.Unlock, m.LockContext, m.Unlock, tryM, 1},
		{"RWMutex.LockContext", rw.Lock, rw.Unlock, rw.LockContext, rw.Unlock, tryRW(rw), 1},
		{"RWMutex.RLockContext", rw2.Lock, rw2.Unlock, rw2.RLockContext, rw2.RUnlock, tryRW(rw2), 0},
	}
}

// holdIn makes a goroutine take l and keep it until the returned func is
// called; that func waits for the goroutine to end.
func holdIn(l ctxLock) (release func()) {
	locked, done, let := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		l.hold()
		close(locked)
		<-let
		l.release()
	}()
	<-locked
	return func() {
		close(let)
		<-done
	}
}

// eventually polls cond for up to 5s, on the calling goroutine (testify's
// Eventually starts goroutines, which would upset a goroutine count).
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
	}
}

func TestAbandonedWaitsShareOneHelper(t *testing.T) {
	for _, l := range ctxLocks() {
		t.Run(l.name, func(t *testing.T) {
			fresh(t)
			release := holdIn(l)
			before := runtime.NumGoroutine()

			const attempts = 25
			for range attempts {
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				err := l.wait(ctx)
				cancel()
				require.Error(t, err)
				require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
			}
			assert.Equal(t, l.helpers, lockorder.IdleHelpers(), "helpers queued for all %d attempts", attempts)
			eventually(t, func() bool { return runtime.NumGoroutine()-before <= l.helpers }, "goroutines left behind by abandoned waits")

			// The lock comes free: the helper takes it, lets it go and ends.
			release()
			if l.helpers == 0 {
				assert.True(t, l.try(), "an abandoned wait holds the lock")
			}
			eventually(t, func() bool { return lockorder.IdleHelpers() == 0 }, "the idle helper ends once it gets the lock")
			eventually(t, l.try, "the abandoned wait left the lock held")
			eventually(t, func() bool { return runtime.NumGoroutine() <= before-1 }, "goroutines left after the lock came free")
		})
	}
}

// A wait that adopts an idle helper gets the lock through it, in the
// helper's place in the queue.
func TestWaitAdoptsIdleHelper(t *testing.T) {
	for _, l := range ctxLocks() {
		t.Run(l.name, func(t *testing.T) {
			if l.helpers == 0 {
				t.Skip("no helper to adopt: the wait is given up in place")
			}
			fresh(t)
			release := holdIn(l)
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			require.Error(t, l.wait(ctx))
			cancel()
			require.Equal(t, 1, lockorder.IdleHelpers())

			got := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				got <- l.wait(ctx)
			}()
			eventually(t, func() bool { return lockorder.IdleHelpers() == 0 }, "the new wait adopts the idle helper")
			select {
			case err := <-got:
				t.Fatalf("the wait ended while the lock was held: %v", err)
			case <-time.After(10 * time.Millisecond):
			}
			release()
			require.NoError(t, <-got)
			assert.False(t, l.try(), "the wait returned without the lock")
			l.undo()
			assert.True(t, l.try())
			assert.Zero(t, lockorder.IdleHelpers())
		})
	}
}

// Waits given up at once by many goroutines leave at most one helper each,
// and all of them end when the lock comes free.
func TestConcurrentAbandonedWaits(t *testing.T) {
	l := ctxLocks()[0]
	fresh(t)
	release := holdIn(l)
	const waiters, rounds = 8, 10
	done := make(chan struct{})
	for range waiters {
		go func() {
			defer func() { done <- struct{}{} }()
			for range rounds {
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				if err := l.wait(ctx); err == nil {
					l.undo()
				}
				cancel()
			}
		}()
	}
	for range waiters {
		<-done
	}
	assert.LessOrEqual(t, lockorder.IdleHelpers(), waiters)
	assert.Positive(t, lockorder.IdleHelpers())
	release()
	eventually(t, func() bool { return lockorder.IdleHelpers() == 0 }, "idle helpers end once the lock is free")
	eventually(t, l.try, "an abandoned wait left the lock held")
}
