package lockorder_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The checks of RWMutex.LockContext and RLockContext giving up, shared by
// both builds (this file has no build tag): the default build runs them in
// every mode (rwcontext_modes_test.go), the syncwatch_off build once
// (off_test.go). A wait that gives up leaves m as it was: in particular a
// writer that gave up no longer holds readers out, so a program in which
// one reader waits for another (legal while no writer waits) goes on.

// readHeldElsewhere makes a new goroutine read-lock rw and keep it until
// the returned func is called; that func waits for the goroutine to end.
func readHeldElsewhere(rw *lockorder.RWMutex) (release func()) {
	l := ctxLock{hold: rw.RLock, release: rw.RUnlock}
	return holdIn(l)
}

// within runs f in a new goroutine and reports whether it returned within
// d. A goroutine still blocked is left behind (the test fails anyway).
func within(d time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// promptly bounds what must not block: long enough for a loaded machine,
// far shorter than any wait on the first reader, which never leaves.
const promptly = 5 * time.Second

func checkCancelledWriteLeavesReadersIn(t *testing.T) {
	rw := lockorder.NewRWMutex("rwcontext.write")
	release := readHeldElsewhere(rw)
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
	err := rw.LockContext(ctx)
	cancel()
	require.Error(t, err, "LockContext got the lock past a reader")
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	// Right after, with the first reader still in: a new reader gets in,
	// both by TryRLock and by RLock, without waiting for the first.
	require.True(t, rw.TryRLock(), "TryRLock fails after a LockContext that gave up")
	rw.RUnlock()
	require.True(t, within(promptly, func() { rw.RLock(); rw.RUnlock() }),
		"RLock waits for a writer whose LockContext gave up")
	// A reader that waits for another reader (legal: no writer waits).
	// The inner reader has released too before the check goes on: the
	// goroutine count below is the process's, which other goroutines
	// ending may bring down first, and the lock must be free at the end.
	inner, innerDone := make(chan struct{}), make(chan struct{})
	require.True(t, within(promptly, func() {
		rw.RLock()
		go func() { rw.RLock(); close(inner); rw.RUnlock(); close(innerDone) }()
		<-inner
		rw.RUnlock()
		<-innerDone
	}), "a reader waiting for a reader deadlocks behind a writer that gave up")
	assert.Zero(t, lockorder.CtxWaiters(), "the writer is still registered")
	waitUntil(t, func() bool { return runtime.NumGoroutine() <= before }, "the goroutines to end (the writer left none behind)")

	assert.False(t, rw.TryLock(), "the first reader still holds the lock")
	release()
	require.True(t, rw.TryLock(), "the lock is not free once its reader left")
	rw.Unlock()
}

func checkCancelledReadLeavesNothing(t *testing.T) {
	rw := lockorder.NewRWMutex("rwcontext.read")
	l := ctxLock{hold: rw.Lock, release: rw.Unlock}
	release := holdIn(l)
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
	err := rw.RLockContext(ctx)
	cancel()
	require.Error(t, err, "RLockContext got the lock past a writer")
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Zero(t, lockorder.CtxWaiters(), "the reader is still registered")
	waitUntil(t, func() bool { return runtime.NumGoroutine() <= before }, "the goroutines to end (the reader left none behind)")

	// Once the writer lets go, the lock is free at once: no reader that
	// gave up is still counted.
	release()
	require.True(t, rw.TryLock(), "a reader that gave up still holds the lock")
	rw.Unlock()
}

// checkCancelStress races LockContext and RLockContext with short
// deadlines against plain readers and writers leaving and coming: writers
// always exclude everyone, nothing stays blocked, and the lock ends free.
func checkCancelStress(t *testing.T) {
	rw := lockorder.NewRWMutex("rwcontext.stress")
	var (
		writers, readers atomic.Int32
		bad              atomic.Int32
		gaveUp, got      atomic.Int32
		wg               sync.WaitGroup
	)
	const goroutines, rounds = 6, 300
	if testing.Short() {
		t.Skip("stress")
	}
	write := func() {
		if writers.Add(1) != 1 || readers.Load() != 0 {
			bad.Add(1)
		}
		runtime.Gosched()
		writers.Add(-1)
	}
	read := func() {
		readers.Add(1)
		if writers.Load() != 0 {
			bad.Add(1)
		}
		runtime.Gosched()
		readers.Add(-1)
	}
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				d := time.Duration((g*rounds+i)%7) * 20 * time.Microsecond
				switch (g + i) % 4 {
				case 0:
					ctx, cancel := context.WithTimeout(context.Background(), d)
					if rw.LockContext(ctx) == nil {
						got.Add(1)
						write()
						rw.Unlock()
					} else {
						gaveUp.Add(1)
					}
					cancel()
				case 1:
					ctx, cancel := context.WithTimeout(context.Background(), d)
					if rw.RLockContext(ctx) == nil {
						read()
						rw.RUnlock()
					}
					cancel()
				case 2:
					rw.Lock()
					write()
					rw.Unlock()
				default:
					rw.RLock()
					read()
					rw.RUnlock()
				}
			}
		})
	}
	require.True(t, within(30*time.Second, wg.Wait), "a goroutine stayed blocked")
	assert.Zero(t, bad.Load(), "a writer did not exclude")
	assert.Positive(t, got.Load())
	t.Logf("LockContext: %d got the lock, %d gave up", got.Load(), gaveUp.Load())
	require.True(t, rw.TryLock(), "the lock is not free at the end")
	rw.Unlock()
}
