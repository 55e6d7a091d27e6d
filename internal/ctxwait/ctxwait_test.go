package ctxwait_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/ctxwait"
)

// acquire starts a waiter for m and returns what Acquire returns, once it
// has, and the channel that makes it give up.
func acquire(m *sync.Mutex, polled bool) (got <-chan bool, giveUp chan struct{}) {
	res, done := make(chan bool, 1), make(chan struct{})
	go func() { res <- ctxwait.Acquire(m, m, done, polled) }()
	return res, done
}

// registered waits until n waiters are registered.
func registered(n int) {
	for ctxwait.Registered() != n {
		runtime.Gosched()
	}
}

func TestGivingUpLeavesTheLockFree(t *testing.T) {
	var m sync.Mutex
	m.Lock()
	got, giveUp := acquire(&m, false)
	registered(1)
	close(giveUp)
	require.False(t, <-got, "the waiter got a held lock")
	assert.Zero(t, ctxwait.Registered())
	ctxwait.Unlock(&m, &m)
	assert.True(t, m.TryLock(), "the lock is held for a waiter that gave up")
	m.Unlock()
}

func TestWaitersGetTheLockInTurn(t *testing.T) {
	var m sync.Mutex
	m.Lock()
	first, _ := acquire(&m, false)
	registered(1)
	second, _ := acquire(&m, false)
	registered(2)
	ctxwait.Unlock(&m, &m)
	require.True(t, <-first)
	assert.Equal(t, 1, ctxwait.Registered(), "the second waiter got the lock with the first")
	ctxwait.Unlock(&m, &m)
	require.True(t, <-second)
	ctxwait.Unlock(&m, &m)
	assert.Zero(t, ctxwait.Registered())
	assert.True(t, m.TryLock())
}

// A waiter that gives up passes its place on: the next one gets the lock.
func TestWaiterBehindOneThatGaveUp(t *testing.T) {
	var m sync.Mutex
	m.Lock()
	_, giveUp := acquire(&m, false)
	registered(1)
	second, _ := acquire(&m, false)
	registered(2)
	close(giveUp)
	registered(1)
	ctxwait.Unlock(&m, &m)
	require.True(t, <-second)
	ctxwait.Unlock(&m, &m)
}

// Rule 2: a release that does not look for waiters (an inlined fast path
// that checked before the waiter registered) is found by the poll.
func TestPolledWaiterFindsASilentRelease(t *testing.T) {
	var m sync.Mutex
	m.Lock()
	got, _ := acquire(&m, true)
	registered(1)
	m.Unlock() // not through ctxwait.Unlock: the waiter is not rung
	require.True(t, <-got)
	ctxwait.Unlock(&m, &m)
	assert.Zero(t, ctxwait.Registered())
}

// Mutual exclusion holds among waiters, Lock callers and TryLock callers
// mixed, with waits given up at random.
func TestMixedExclusion(t *testing.T) {
	var (
		m       sync.Mutex
		n, in   int
		wg      sync.WaitGroup
		overlap bool
	)
	enter := func() {
		in++
		if in != 1 {
			overlap = true
		}
		n++
		in--
		ctxwait.Unlock(&m, &m)
	}
	const goroutines, rounds = 6, 2000
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				switch (g + i) % 3 {
				case 0:
					done := make(chan struct{})
					if i%5 == 0 {
						close(done)
					}
					if ctxwait.Acquire(&m, &m, done, g%2 == 0) {
						enter()
					}
				case 1:
					m.Lock()
					enter()
				default:
					if m.TryLock() {
						enter()
					}
				}
			}
		})
	}
	wg.Wait()
	assert.False(t, overlap, "two goroutines held the lock at once")
	assert.Positive(t, n)
	assert.Zero(t, ctxwait.Registered())
	assert.True(t, m.TryLock())
}
