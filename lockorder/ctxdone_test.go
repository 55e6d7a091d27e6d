//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A LockContext whose context is done when it is called cannot wait: it
// is a try (R3). Taken in the inverse order of an earlier a -> b, it closes
// no cycle, whether the lock is free (it takes it, and it counts as held)
// or not (it fails at once, with the context's error). Its kind of lock
// and way (Mutex, RWMutex for writing or reading) change nothing.
func TestLockContextOnADoneContextIsATry(t *testing.T) {
	type lock interface {
		Lock()
		Unlock()
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, c := range []struct {
		name string
		a    func() (l lock, try func(context.Context) error, release func())
	}{
		{"Mutex", func() (lock, func(context.Context) error, func()) {
			a := lockorder.NewMutex("done-a")
			return a, a.LockContext, a.Unlock
		}},
		{"RWMutex", func() (lock, func(context.Context) error, func()) {
			a := lockorder.NewRWMutex("done-a")
			return a, a.LockContext, a.Unlock
		}},
		{"RWMutex.RLockContext", func() (lock, func(context.Context) error, func()) {
			a := lockorder.NewRWMutex("done-a")
			return a, a.RLockContext, a.RUnlock
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, ctx := range []context.Context{cancelled, expired} {
				fresh(t)
				a, try, release := c.a()
				b := lockorder.NewMutex("done-b")
				a.Lock()
				b.Lock()
				b.Unlock()
				a.Unlock()

				b.Lock()
				require.NoError(t, try(ctx), "a is free: the try takes it")
				held := lockorder.HeldLocks()
				require.Len(t, held, 2, "a counts as held")
				release()
				b.Unlock()

				a.Lock() // held elsewhere: the try fails at once
				b.Lock()
				errc := make(chan error, 1)
				go func() {
					b2 := lockorder.NewMutex("done-c")
					b2.Lock()
					errc <- try(ctx)
					b2.Unlock()
				}()
				err := <-errc
				b.Unlock()
				a.Unlock()
				var we *lockorder.WaitError
				require.ErrorAs(t, err, &we)
				assert.True(t, errors.Is(err, ctx.Err()), "the error wraps the context's: %v", err)

				assert.Empty(t, only(lockorder.KindCycle), "a try closes no cycle")
			}
		})
	}
}

// A LockContext whose wait is bounded by a deadline still waits, and still
// closes the cycle it would wait in.
func TestLockContextWithADeadlineAheadStillWaits(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("deadline-a"), lockorder.NewMutex("deadline-b")
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.Lock()
	require.NoError(t, a.LockContext(ctx))
	a.Unlock()
	b.Unlock()
	assert.Len(t, only(lockorder.KindCycle), 1)
}
