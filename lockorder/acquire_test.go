//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The acquisition paths that are not inlined, each taken from a function
// of its own, for the held profile to name.

//go:noinline
func lockUnder(m *lockorder.Mutex) { m.Lock() }

//go:noinline
func lockContextUnder(m *lockorder.Mutex) error { return m.LockContext(context.Background()) }

//go:noinline
func writeUnder(rw *lockorder.RWMutex) { rw.Lock() }

//go:noinline
func writeContextUnder(rw *lockorder.RWMutex) error { return rw.LockContext(context.Background()) }

//go:noinline
func readUnder(rw *lockorder.RWMutex) { rw.RLock() }

//go:noinline
func readContextUnder(rw *lockorder.RWMutex) error { return rw.RLockContext(context.Background()) }

//go:noinline
func tryWriteUnder(rw *lockorder.RWMutex) bool { return rw.TryLock() }

//go:noinline
func tryReadUnder(rw *lockorder.RWMutex) bool { return rw.TryRLock() }

// acquisitionPaths lists every acquisition path that is not inlined: the
// function that takes the lock, and how it is released.
func acquisitionPaths() []struct {
	fn      string
	take    func(t *testing.T, m *lockorder.Mutex, rw *lockorder.RWMutex)
	release func(m *lockorder.Mutex, rw *lockorder.RWMutex)
} {
	type path = struct {
		fn      string
		take    func(t *testing.T, m *lockorder.Mutex, rw *lockorder.RWMutex)
		release func(m *lockorder.Mutex, rw *lockorder.RWMutex)
	}
	unlock := func(m *lockorder.Mutex, _ *lockorder.RWMutex) { m.Unlock() }
	wunlock := func(_ *lockorder.Mutex, rw *lockorder.RWMutex) { rw.Unlock() }
	runlock := func(_ *lockorder.Mutex, rw *lockorder.RWMutex) { rw.RUnlock() }
	return []path{
		{"lockUnder", func(_ *testing.T, m *lockorder.Mutex, _ *lockorder.RWMutex) { lockUnder(m) }, unlock},
		{"lockContextUnder", func(t *testing.T, m *lockorder.Mutex, _ *lockorder.RWMutex) {
			require.NoError(t, lockContextUnder(m))
		}, unlock},
		{"writeUnder", func(_ *testing.T, _ *lockorder.Mutex, rw *lockorder.RWMutex) { writeUnder(rw) }, wunlock},
		{"writeContextUnder", func(t *testing.T, _ *lockorder.Mutex, rw *lockorder.RWMutex) {
			require.NoError(t, writeContextUnder(rw))
		}, wunlock},
		{"readUnder", func(_ *testing.T, _ *lockorder.Mutex, rw *lockorder.RWMutex) { readUnder(rw) }, runlock},
		{"readContextUnder", func(t *testing.T, _ *lockorder.Mutex, rw *lockorder.RWMutex) {
			require.NoError(t, readContextUnder(rw))
		}, runlock},
		{"tryWriteUnder", func(t *testing.T, _ *lockorder.Mutex, rw *lockorder.RWMutex) {
			require.True(t, tryWriteUnder(rw))
		}, wunlock},
		{"tryReadUnder", func(t *testing.T, _ *lockorder.Mutex, rw *lockorder.RWMutex) {
			require.True(t, tryReadUnder(rw))
		}, runlock},
	}
}

// acquisitionLocks starts a test of the acquisition paths with the held
// profile on: it returns the lock to hold around them, and a Mutex and an
// RWMutex to take.
func acquisitionLocks(t *testing.T) (outer, m *lockorder.Mutex, rw *lockorder.RWMutex) {
	t.Helper()
	fresh(t)
	lockorder.Configure(lockorder.WithHeldProfile(true))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	return lockorder.NewMutex("acq-outer"), lockorder.NewMutex("acq-mutex"), lockorder.NewRWMutex("acq-rw")
}

// Every acquisition path that is not inlined, taken under another lock
// (RLock and Lock then leave their inlined prefix), makes the lock held,
// and its hold in the held profile starts where the user took the lock.
func TestAcquisitionPathsHoldAndProfileWhereTaken(t *testing.T) {
	for _, p := range acquisitionPaths() {
		t.Run(p.fn, func(t *testing.T) {
			outer, m, rw := acquisitionLocks(t)
			fn := "lockorder_test." + p.fn

			outer.Lock()
			p.take(t, m, rw)
			held := lockorder.HeldLocks()
			require.Len(t, held, 2, "the outer lock and the one taken")
			assert.Contains(t, []string{"acq-mutex", "acq-rw"}, held[1].Class)
			assert.Equal(t, int64(1), holds(t, fn))
			for _, s := range liveSamples(t, lockorder.HeldProfileName, fn) {
				assert.True(t, strings.HasSuffix(functions(s)[0], fn),
					"the stack starts where the lock was taken, not in lockorder: %v", functions(s))
			}
			p.release(m, rw)
			outer.Unlock()
			assert.Zero(t, holds(t, fn), "the hold ends with its release")
			assert.Empty(t, lockorder.HeldLocks())
			assert.Empty(t, lockorder.Violations())
		})
	}
}

// A LockContext or RLockContext that gives up, taken under another lock,
// leaves nothing of the acquisition: the caller holds only what it held,
// the held profile has no hold of it, and the lock is free afterwards.
func TestAcquisitionGivenUpLeavesNothing(t *testing.T) {
	for _, p := range []struct {
		fn   string
		take func(ctx context.Context, m *lockorder.Mutex, rw *lockorder.RWMutex) error
	}{
		{"Mutex.LockContext", func(ctx context.Context, m *lockorder.Mutex, _ *lockorder.RWMutex) error { return m.LockContext(ctx) }},
		{"RWMutex.LockContext", func(ctx context.Context, _ *lockorder.Mutex, rw *lockorder.RWMutex) error { return rw.LockContext(ctx) }},
		{"RWMutex.RLockContext", func(ctx context.Context, _ *lockorder.Mutex, rw *lockorder.RWMutex) error {
			return rw.RLockContext(ctx)
		}},
	} {
		t.Run(p.fn, func(t *testing.T) {
			outer, m, rw := acquisitionLocks(t)
			run(func() { m.Lock(); rw.Lock() }) // held by a goroutine that has exited

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			outer.Lock()
			err := p.take(ctx, m, rw)
			require.Error(t, err)
			assert.True(t, errors.Is(err, context.Canceled))
			held := lockorder.HeldLocks()
			require.Len(t, held, 1, "only the outer lock")
			assert.Equal(t, "acq-outer", held[0].Class)
			outer.Unlock()

			m.Unlock()
			rw.Unlock()
			assert.True(t, m.TryLock(), "nothing holds the Mutex on the caller's behalf")
			assert.True(t, rw.TryLock(), "nothing holds the RWMutex on the caller's behalf")
			m.Unlock()
			rw.Unlock()
			assert.Empty(t, lockorder.HeldLocks())
		})
	}
}
