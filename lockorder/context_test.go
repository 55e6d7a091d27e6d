//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
)

//go:noinline
func holdUntil(m interface{ Lock() }, locked chan<- struct{}, release <-chan struct{}) {
	m.Lock()
	close(locked)
	<-release
}

func TestLockContextDeadline(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("ctxlock")
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		holdUntil(m, locked, release)
		m.Unlock()
	}()
	<-locked

	start := time.Now() // before the deadline is set, so it bounds the wait from below
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := m.LockContext(ctx)
	require.Error(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, lockorder.ErrWaitAbandoned)
	var we *lockorder.WaitError
	require.ErrorAs(t, err, &we)
	assert.Contains(t, we.Lock, "ctxlock#")
	assert.NotZero(t, we.Holder)
	assert.Equal(t, "wait-timeout", we.ErrorType())

	vs := only(lockorder.KindWaitTimeout)
	require.Len(t, vs, 1)
	v := vs[0]
	assert.Equal(t, we.Holder, v.Holder)
	// Giving up costs no goroutine dump: where the holder is comes only
	// from a dump taken recently for another report.
	if len(v.HolderStack) > 0 {
		assert.Contains(t, v.HolderStack[0].Function, "holdUntil")
	}
	assert.True(t, errors.Is(v.Err, context.DeadlineExceeded))

	// The abandoned wait never leaves m locked: once the holder lets go,
	// m is free again.
	close(release)
	<-done
	waitUntil(t, func() bool {
		if m.TryLock() {
			m.Unlock()
			return true
		}
		return false
	}, "m to be free")
}

func TestLockContextCancelIsNotAViolation(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("cancelled-rlock")
	m.Lock()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- m.RLockContext(ctx) }()
	waitingOn(t, "cancelled-rlock", 1)
	cancel()
	err := <-errc
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, lockorder.Violations(), "a cancellation is the caller's choice, not a wait past a bound")
	m.Unlock()
	waitUntil(t, func() bool {
		if m.TryLock() {
			m.Unlock()
			return true
		}
		return false
	}, "m to be free")
}

func TestLockContextSucceeds(t *testing.T) {
	fresh(t)
	var m lockorder.Mutex
	require.NoError(t, m.LockContext(context.Background()))
	m.AssertHeld()
	m.Unlock()

	locked := make(chan struct{})
	name := nameOf(t, &m)
	go func() {
		m.Lock()
		close(locked)
		waitingOn(t, name, 1) // LockContext waits
		m.Unlock()
	}()
	<-locked
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, m.LockContext(ctx))
	m.AssertHeld()
	m.Unlock()

	var rw lockorder.RWMutex
	require.NoError(t, rw.LockContext(ctx))
	rw.Unlock()
	require.NoError(t, rw.RLockContext(ctx))
	rw.AssertRHeld()
	rw.RUnlock()
	assert.Empty(t, lockorder.Violations())
}

func TestLockContextNilPanics(t *testing.T) {
	var m lockorder.Mutex
	assert.PanicsWithValue(t, "lockorder: LockContext with nil Context", func() {
		m.LockContext(nil) //nolint:staticcheck // testing the panic
	})
}

func TestLockContextChecksOrder(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("cA"), lockorder.NewMutex("cB")
	run(func() { lockAB(a, b) })
	run(func() {
		b.Lock()
		require.NoError(t, a.LockContext(context.Background()))
		a.Unlock()
		b.Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 1, "a bounded wait can still deadlock until its bound")
}

// A wait that gives up stops no world: with many goroutines a dump would
// make it return long after its deadline.
func TestLockContextTimeoutTakesNoGoroutineDump(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("nodump")
	m.Lock()
	defer m.Unlock()
	before := waitfor.DumpCount()
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		require.Error(t, m.LockContext(ctx))
		cancel()
	}
	assert.Equal(t, before, waitfor.DumpCount())
	assert.NotEmpty(t, only(lockorder.KindWaitTimeout))
}
