//go:build !syncwatch_off

package lockorder_test

import (
	"bytes"
	"context"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

func TestProfilesAreRegistered(t *testing.T) {
	for _, name := range []string{lockorder.HeldProfileName, lockorder.WaitingProfileName} {
		p := pprof.Lookup(name)
		require.NotNil(t, p, name)
		assert.Equal(t, name, p.Name())
		assert.True(t, slices.ContainsFunc(pprof.Profiles(), func(q *pprof.Profile) bool { return q == p }),
			"listed by pprof.Profiles, hence by /debug/pprof/")
	}
}

//go:noinline
func takeAndKeep(m sync.Locker) { m.Lock() }

//go:noinline
func tryAndKeep(m *lockorder.Mutex) bool { return m.TryLock() }

//go:noinline
func readAndKeep(m *lockorder.RWMutex) { m.RLock() }

// holds returns how many holds the held profile shows taken in fn.
func holds(t *testing.T, fn string) int64 {
	t.Helper()
	var n int64
	for _, s := range liveSamples(t, lockorder.HeldProfileName, fn) {
		n += s.Value[0]
	}
	return n
}

func TestHeldProfileListsHoldsWhereTaken(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithHeldProfile(true))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	a, b := lockorder.NewMutex("heldA"), lockorder.NewMutex("heldB")
	rw := lockorder.NewRWMutex("heldRW")

	takeAndKeep(a)
	require.True(t, tryAndKeep(b))
	readAndKeep(rw)
	assert.Equal(t, int64(1), holds(t, "lockorder_test.takeAndKeep"))
	assert.Equal(t, int64(1), holds(t, "lockorder_test.tryAndKeep"))
	assert.Equal(t, int64(1), holds(t, "lockorder_test.readAndKeep"))
	for _, fn := range []string{"lockorder_test.takeAndKeep", "lockorder_test.tryAndKeep", "lockorder_test.readAndKeep"} {
		for _, s := range liveSamples(t, lockorder.HeldProfileName, fn) {
			assert.True(t, strings.HasSuffix(functions(s)[0], fn),
				"the stack starts where the lock was taken, not in lockorder: %v", functions(s))
		}
	}

	rw.RUnlock()
	b.Unlock()
	assert.Zero(t, holds(t, "lockorder_test.readAndKeep"))
	assert.Zero(t, holds(t, "lockorder_test.tryAndKeep"))

	// Released on its behalf by another goroutine: the hold ends there.
	run(func() { a.Unlock() })
	assert.Zero(t, holds(t, "lockorder_test.takeAndKeep"))

	// A hold kept by a goroutine that exited ends when another releases it.
	run(func() { takeAndKeep(b) })
	assert.Equal(t, int64(1), holds(t, "lockorder_test.takeAndKeep"))
	b.Unlock()
	assert.Zero(t, holds(t, "lockorder_test.takeAndKeep"))
}

func TestHeldProfileEmptyWhenOff(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("held-off-hold")
	takeAndKeep(m)
	defer m.Unlock()
	assert.Zero(t, holds(t, "lockorder_test.takeAndKeep"))
}

//go:noinline
func heldProfileWaiter(release <-chan struct{}) { lockorder.WaitNoted(release) }

// heldSamples returns the samples of the waiting profile that have fn on
// their stack, reading the profile as go tool pprof would.
func heldSamples(t *testing.T, fn string) []*profile.Sample {
	t.Helper()
	return liveSamples(t, lockorder.WaitingProfileName, fn)
}

// liveSamples returns the samples of the named runtime/pprof profile that have fn on
// their stack.
func liveSamples(t *testing.T, name, fn string) []*profile.Sample {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, pprof.Lookup(name).WriteTo(&buf, 0))
	p, err := profile.Parse(&buf)
	require.NoError(t, err)
	var out []*profile.Sample
	for _, s := range p.Sample {
		if slices.ContainsFunc(functions(s), func(f string) bool { return strings.HasSuffix(f, fn) }) {
			out = append(out, s)
		}
	}
	return out
}

// heldWaiters returns how many goroutines the held profile shows with fn on
// their stack.
func heldWaiters(t *testing.T, fn string) int64 {
	t.Helper()
	var n int64
	for _, s := range heldSamples(t, fn) {
		n += s.Value[0]
	}
	return n
}

func TestWaitingProfileListsWaitsInProgress(t *testing.T) {
	const fn = "lockorder_test.heldProfileWaiter"
	require.Zero(t, heldWaiters(t, fn))

	release := make(chan struct{})
	done := make(chan struct{})
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			heldProfileWaiter(release)
		}()
	}
	waitUntil(t, func() bool { return heldWaiters(t, fn) == 2 }, "two waits in the waiting profile")
	for _, s := range heldSamples(t, fn) {
		assert.Equal(t, "github.com/syncwatch/syncwatch/lockorder.WaitNoted", functions(s)[0],
			"the stack starts in the function that noted the wait")
	}
	var text bytes.Buffer
	require.NoError(t, pprof.Lookup(lockorder.WaitingProfileName).WriteTo(&text, 1))
	assert.Contains(t, text.String(), fn, "the text form names the waiter's function")

	close(release)
	<-done
	<-done
	assert.Zero(t, heldWaiters(t, fn), "an entry ends with its wait")
}

func TestWaitingProfileShowsContendedLock(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithHeldProfile(true))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	m := lockorder.NewMutex("held-contended")
	const fn = "lockorder_test.lockContended"
	m.Lock()
	done := make(chan struct{})
	go func() { defer close(done); lockContended(m) }()
	waitUntil(t, func() bool { return heldWaiters(t, fn) == 1 }, "the contended Lock in the waiting profile")
	for _, s := range heldSamples(t, fn) {
		assert.Equal(t, "github.com/syncwatch/syncwatch/lockorder.checkWait", functions(s)[0])
	}
	m.Unlock()
	<-done
	assert.Zero(t, heldWaiters(t, fn))
}

func TestProfilesOffByDefault(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("held-off")
	const fn = "lockorder_test.lockContended"
	m.Lock()
	done := make(chan struct{})
	go func() { defer close(done); lockContended(m) }()
	waitParked(t, fn)
	assert.Zero(t, heldWaiters(t, fn), "nothing is noted unless WithHeldProfile(true)")
	m.Unlock()
	<-done
}

func TestHeldProfileLockContextHold(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithHeldProfile(true))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	var m lockorder.Mutex
	var rw lockorder.RWMutex
	require.NoError(t, ctxAndKeep(&m, &rw))
	assert.Equal(t, int64(2), holds(t, "lockorder_test.ctxAndKeep"))
	m.Unlock()
	rw.RUnlock()
	assert.Zero(t, holds(t, "lockorder_test.ctxAndKeep"))
}

//go:noinline
func ctxAndKeep(m *lockorder.Mutex, rw *lockorder.RWMutex) error {
	if err := m.LockContext(context.Background()); err != nil {
		return err
	}
	return rw.RLockContext(context.Background())
}
