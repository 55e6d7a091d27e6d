package lockorder_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The LockContext tests that hold in both builds: a wait given up leaves
// nothing behind, no goroutine and no hold: once LockContext or
// RLockContext has returned its error, nothing takes the lock on its
// behalf (no phantom holder), and a program's TryLock on a lock nobody of
// its own holds succeeds.

// ctxLock is one way of waiting with a context, on a lock some other
// goroutine can hold.
type ctxLock struct {
	name    string
	hold    func()                      // by the holder
	release func()                      // by the holder
	wait    func(context.Context) error // by the waiter
	undo    func()                      // releases what wait took
	try     func() bool                 // whether the lock is free: takes and releases it
	// beside is whether the wait is for a sync lock, made beside it in
	// internal/ctxwait (CtxWaiters counts it); false where it queues in
	// the lock itself (a reader at RWMutex's gate).
	beside bool
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
		{"Mutex.LockContext", m.Lock, m.Unlock, m.LockContext, m.Unlock, tryM, true},
		{"RWMutex.LockContext", rw.Lock, rw.Unlock, rw.LockContext, rw.Unlock, tryRW(rw), true},
		{"RWMutex.RLockContext", rw2.Lock, rw2.Unlock, rw2.RLockContext, rw2.RUnlock, tryRW(rw2), false},
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

// giveUp makes a wait on l that gives up at its deadline, behind a
// holder that keeps l; it fails the test if the wait does not give up.
func giveUp(t *testing.T, l ctxLock, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := l.wait(ctx)
	if assert.Error(t, err, "%s got a lock held elsewhere", l.name) {
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	}
}

func TestAbandonedWaitsLeaveNothing(t *testing.T) {
	for _, l := range ctxLocks() {
		t.Run(l.name, func(t *testing.T) {
			fresh(t)
			release := holdIn(l)
			before := runtime.NumGoroutine()
			for range 25 {
				giveUp(t, l, time.Millisecond)
			}
			assert.Zero(t, lockorder.CtxWaiters(), "a wait that gave up is still registered")
			// context.WithTimeout's timer runs its function in a goroutine
			// of its own, which ends by itself.
			waitUntil(t, func() bool { return runtime.NumGoroutine() <= before }, "the goroutines of the abandoned waits to end (none left behind)")
			release()
			assert.True(t, l.try(), "an abandoned wait holds the lock once its holder let go")
		})
	}
}

// TestNoPhantomHolder: many times over, LockContext gives up behind a
// holder, alone or with other waiters giving up at once, then the holder
// lets go: the program's TryLock must succeed every time. (Before the
// waits were made in place, a goroutine left queued on the caller's
// behalf took the lock for a moment once it was released, and a TryLock
// in the next few yields failed.) Run in every mode (TestNoPhantomHolder)
// and in the syncwatch_off build.
func checkNoPhantomHolder(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	for _, l := range ctxLocks() {
		for _, waiters := range []int{1, 4} {
			for i := range rounds {
				release := holdIn(l)
				var wg sync.WaitGroup
				for range waiters {
					wg.Go(func() { giveUp(t, l, 50*time.Microsecond) })
				}
				wg.Wait()
				release()
				// Let anything the waits left behind run, and look again.
				for try := range 20 {
					if !l.try() {
						t.Fatalf("%s, %d waiters, round %d, try %d: TryLock failed on a lock nobody holds", l.name, waiters, i, try)
					}
					runtime.Gosched()
				}
			}
		}
	}
	assert.Zero(t, lockorder.CtxWaiters())
}

// A wait gets the lock as soon as its holder lets go.
func TestWaitGetsTheReleasedLock(t *testing.T) {
	for _, l := range ctxLocks() {
		t.Run(l.name, func(t *testing.T) {
			fresh(t)
			release := holdIn(l)
			got := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				got <- l.wait(ctx)
			}()
			if l.beside {
				waitUntil(t, func() bool { return lockorder.CtxWaiters() == 1 }, "the wait to register")
			}
			release()
			require.NoError(t, <-got)
			assert.False(t, l.try(), "the wait returned without the lock")
			l.undo()
			assert.True(t, l.try())
			assert.Zero(t, lockorder.CtxWaiters())
		})
	}
}

// A LockContext is not starved by a steady stream of Lock callers: it
// gets the lock while they keep coming.
func TestWaitIsNotStarved(t *testing.T) {
	for _, l := range ctxLocks() {
		t.Run(l.name, func(t *testing.T) {
			fresh(t)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						l.hold()
						runtime.Gosched()
						l.release()
					}
				})
			}
			for range 20 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				err := l.wait(ctx)
				cancel()
				require.NoError(t, err, "starved behind the Lock callers")
				l.undo()
			}
			close(stop)
			wg.Wait()
			assert.True(t, l.try())
		})
	}
}

// Waits given up at once by many goroutines, some of them getting the
// lock, leave nothing registered and the lock free.
func TestConcurrentAbandonedWaits(t *testing.T) {
	for _, l := range ctxLocks() {
		t.Run(l.name, func(t *testing.T) {
			fresh(t)
			release := holdIn(l)
			const waiters, rounds = 8, 10
			var wg sync.WaitGroup
			for range waiters {
				wg.Go(func() {
					for range rounds {
						ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
						if err := l.wait(ctx); err == nil {
							l.undo()
						}
						cancel()
					}
				})
			}
			wg.Wait()
			assert.Zero(t, lockorder.CtxWaiters())
			release()
			assert.True(t, l.try(), "an abandoned wait left the lock held")
		})
	}
}
