package lockorder_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// LockContext and RLockContext inside a testing/synctest bubble behave as
// x/sync's semaphore.Acquire does there: their wait is durable, so they
// return at the bubble's fake deadline, or as soon as the holder lets go.
// Shared by both builds: every mode (synctest_modes_test.go) and the
// syncwatch_off build (off_test.go).

// bubbleLocks are the waits with a context, on locks made in the bubble.
func bubbleLocks() []ctxLock {
	m := new(lockorder.Mutex)
	rw := new(lockorder.RWMutex)
	rw2 := new(lockorder.RWMutex)
	return []ctxLock{
		{name: "Mutex.LockContext", hold: m.Lock, release: m.Unlock, wait: m.LockContext, undo: m.Unlock, try: tryLock(m)},
		{name: "RWMutex.LockContext", hold: rw.Lock, release: rw.Unlock, wait: rw.LockContext, undo: rw.Unlock, try: tryLock(rw)},
		{name: "RWMutex.LockContext behind a reader", hold: rw2.RLock, release: rw2.RUnlock, wait: rw2.LockContext, undo: rw2.Unlock, try: tryLock(rw2)},
		{name: "RWMutex.RLockContext", hold: rw.Lock, release: rw.Unlock, wait: rw.RLockContext, undo: rw.RUnlock, try: tryLock(rw)},
	}
}

// tryLock reports whether lk is free: it takes it and lets it go.
func tryLock(lk interface {
	TryLock() bool
	Unlock()
}) func() bool {
	return func() bool {
		if lk.TryLock() {
			lk.Unlock()
			return true
		}
		return false
	}
}

func checkLockContextInBubbleTimesOut(t *testing.T) {
	for i := range bubbleLocks() {
		synctest.Test(t, func(t *testing.T) {
			l := bubbleLocks()[i]
			release := holdIn(l)
			const timeout = 10 * time.Second
			start := time.Now()
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			err := l.wait(ctx)
			require.Error(t, err, "%s got a held lock", l.name)
			assert.True(t, errors.Is(err, context.DeadlineExceeded), "%s: %v", l.name, err)
			assert.Equal(t, timeout, time.Since(start), "%s did not return at the fake deadline", l.name)
			release()
			assert.True(t, l.try(), "%s: the lock is held after the wait gave up", l.name)
		})
	}
}

func checkLockContextInBubbleSucceeds(t *testing.T) {
	for i := range bubbleLocks() {
		synctest.Test(t, func(t *testing.T) {
			l := bubbleLocks()[i]
			const hold = 3 * time.Second
			locked, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				l.hold()
				close(locked)
				time.Sleep(hold) // the bubble's fake time: the hold the wait must outlast
				l.release()
			}()
			<-locked
			start := time.Now()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			require.NoError(t, l.wait(ctx), l.name)
			assert.Equal(t, hold, time.Since(start), "%s did not get the lock when it was released", l.name)
			l.undo()
			<-done
			assert.True(t, l.try(), l.name)
		})
	}
}
