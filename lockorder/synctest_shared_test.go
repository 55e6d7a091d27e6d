package lockorder_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A lock shared by a testing/synctest bubble and the code around it (a
// package-level variable), or by two bubbles, works as sync's does: a wait
// on it from either side ends when the holder on the other side lets go.
// (sync's lock waits are not durable in a bubble: its fake clock stands
// still while one lasts, with lockorder as with sync.) Shared by both
// builds: every mode (rwcontext_modes_test.go) and the syncwatch_off build.

// A sharedLock is one way to take a lock and let it go, for the tests
// below: the write side of a Mutex or an RWMutex, or an RWMutex's read side
// (its wait is then behind a writer).
type sharedLock struct {
	name          string
	hold, release func() // by the goroutine that makes the others wait
	take, drop    func() // by the goroutine that waits
}

func sharedLocks() []sharedLock {
	m, rw, rw2 := new(lockorder.Mutex), new(lockorder.RWMutex), new(lockorder.RWMutex)
	return []sharedLock{
		{"Mutex", m.Lock, m.Unlock, m.Lock, m.Unlock},
		{"RWMutex.Lock", rw.Lock, rw.Unlock, rw.Lock, rw.Unlock},
		{"RWMutex.RLock", rw2.Lock, rw2.Unlock, rw2.RLock, rw2.RUnlock},
	}
}

// waitInBubble takes and drops l in a goroutine of its own; it is a named
// function so that blockedIn can find it.
//
//go:noinline
func waitInBubble(l sharedLock, done chan<- struct{}) {
	l.take()
	l.drop()
	close(done)
}

// waitOutside is waitInBubble for a goroutine of no bubble.
//
//go:noinline
func waitOutside(l sharedLock, done chan<- struct{}) {
	l.take()
	l.drop()
	close(done)
}

// blockedIn reports whether a goroutine whose stack contains fn is blocked
// (in any wait: a lock, a channel, a select).
func blockedIn(fn string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(g, fn+"(") && !strings.Contains(header, "[running") && !strings.Contains(header, "[runnable") {
			return true
		}
	}
	return false
}

// A goroutine in a bubble waits for a holder outside it: the wait ends when
// the holder lets go, as with sync (before, an RWMutex's wait there was on
// the bubble's channels, durable, and the bubble was reported deadlocked).
func checkBubbleWaitsForOutsideHolder(t *testing.T) {
	for _, l := range sharedLocks() {
		l.hold()
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			synctest.Test(t, func(t *testing.T) {
				done := make(chan struct{})
				go waitInBubble(l, done)
				<-done
			})
		}()
		waitUntil(t, func() bool { return blockedIn("lockorder_test.waitInBubble") }, l.name+": the bubble's waiter blocked")
		l.release()
		<-ended
	}
}

// A goroutine outside waits for a lock held in a bubble, after the lock's
// first contention was in that bubble (before, an RWMutex's wait queues
// were then the bubble's channels, and a wait on them from outside was a
// fatal error, "receive on synctest channel from outside bubble").
func checkOutsideWaitsForBubbleHolder(t *testing.T) {
	for _, l := range sharedLocks() {
		held, release, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(ended)
			synctest.Test(t, func(t *testing.T) {
				// First, contention inside the bubble.
				l.hold()
				done := make(chan struct{})
				go waitInBubble(l, done)
				for !blockedIn("lockorder_test.waitInBubble") {
					runtime.Gosched() // synctest.Wait would not return: the wait is not durable
				}
				l.release()
				<-done
				// Then a holder inside, a waiter outside.
				l.hold()
				close(held)
				<-release
				l.release()
			})
		}()
		<-held
		done := make(chan struct{})
		go waitOutside(l, done)
		waitUntil(t, func() bool { return blockedIn("lockorder_test.waitOutside") }, l.name+": the outside waiter blocked")
		close(release)
		<-done
		<-ended
	}
}

// Two bubbles at once take turns on one lock, each contended by the other
// and by its own goroutines.
func checkTwoBubblesShareALock(t *testing.T) {
	for _, l := range sharedLocks() {
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				synctest.Test(t, func(t *testing.T) {
					var inner sync.WaitGroup
					for range 4 {
						inner.Go(func() {
							for range 200 {
								l.take()
								runtime.Gosched()
								l.drop()
							}
						})
					}
					inner.Wait()
				})
			}()
		}
		wg.Wait()
	}
}

// waitCtxInBubble waits for l with ctx and, if it got it, lets it go; it
// is a named function so that blockedIn can find it.
//
//go:noinline
func waitCtxInBubble(l ctxLock, ctx context.Context) error {
	err := l.wait(ctx)
	if err == nil {
		l.undo()
	}
	return err
}

// waitCtxOutside is waitCtxInBubble for a goroutine of no bubble.
//
//go:noinline
func waitCtxOutside(l ctxLock, ctx context.Context) error {
	err := l.wait(ctx)
	if err == nil {
		l.undo()
	}
	return err
}

// LockContext and RLockContext cross a bubble's edge too. A wait in a
// bubble, durable there, cannot be woken by a release outside it (a send
// on the bubble's channel would be a fatal error): it polls, on the
// bubble's clock, and gets the lock after the release. A wait outside is
// woken by a release in the bubble.
func checkContextWaitsAcrossTheBubble(t *testing.T) {
	for i := range bubbleLocks() {
		l := bubbleLocks()[i]

		l.hold()
		var err error
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			synctest.Test(t, func(t *testing.T) {
				err = waitCtxInBubble(l, context.Background())
			})
		}()
		waitUntil(t, func() bool { return blockedIn("lockorder_test.waitCtxInBubble") }, l.name+": the bubble's waiter blocked")
		l.release()
		<-ended
		require.NoError(t, err, "%s in the bubble", l.name)
		require.True(t, l.try(), "%s is held after the bubble's wait", l.name)

		held, release := make(chan struct{}), make(chan struct{})
		ended = make(chan struct{})
		go func() {
			defer close(ended)
			synctest.Test(t, func(t *testing.T) {
				l.hold()
				close(held)
				<-release // of no bubble: not durable
				l.release()
			})
		}()
		<-held
		waited := make(chan error, 1)
		go func() { waited <- waitCtxOutside(l, context.Background()) }()
		waitUntil(t, func() bool { return blockedIn("lockorder_test.waitCtxOutside") }, l.name+": the outside waiter blocked")
		close(release)
		require.NoError(t, <-waited, "%s outside", l.name)
		<-ended
		require.True(t, l.try(), "%s is held after the outside wait", l.name)
	}
}
