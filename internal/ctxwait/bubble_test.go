package ctxwait_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/ctxwait"
)

// A Queue's waiter in one synctest bubble, its lock released in another:
// the release cannot ring the waiter (its bell is its bubble's, and a send
// on it from another bubble would be a fatal error), so it neither rings
// it nor hands it the lock; the waiter finds the release by polling.
func TestAQueueWaiterInABubbleIsNotRungFromAnother(t *testing.T) {
	var (
		q ctxwait.Queue
		m sync.Mutex
	)
	held, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		synctest.Test(t, func(t *testing.T) {
			m.Lock()
			close(held)
			<-release // of no bubble: not durable
			if !q.HandOff() {
				m.Unlock()
				q.Ring()
			}
		})
	})
	<-held
	got := make(chan bool, 1)
	wg.Go(func() {
		synctest.Test(t, func(t *testing.T) {
			got <- q.Acquire(&m, nil)
			m.Unlock()
		})
	})
	registered(1)
	close(release)
	wg.Wait()
	assert.True(t, <-got)
	registered(0)
	require.True(t, m.TryLock(), "the lock is held after the wait")
}

// Bells' wait is durable in a bubble: with no token it gives up at the
// bubble's fake deadline; a token sent in the bubble, and rung, ends it
// at once, on the bubble's clock.
func TestBellsWaitIsDurableInABubble(t *testing.T) {
	token := make(chan struct{}, 1) // of no bubble, as internal/rwlock's are
	take := taker(token)
	synctest.Test(t, func(t *testing.T) {
		var b ctxwait.Bells
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		assert.False(t, b.Wait(take, ctx.Done()), "a wait with no token got one")
		assert.Equal(t, 10*time.Second, time.Since(start), "the wait did not end at the fake deadline")

		const after = 3 * time.Second
		go func() {
			time.Sleep(after)
			token <- struct{}{}
			b.Ring()
		}()
		start = time.Now()
		assert.True(t, b.Wait(take, nil))
		assert.Equal(t, after, time.Since(start), "the ring did not end the wait")
	})
}

// A token sent from outside the bubble, whose sender cannot ring the
// waiter's bell, is found by the waiter's poll.
func TestBellsWaiterPollsForATokenFromOutside(t *testing.T) {
	token := make(chan struct{}, 1)
	take := taker(token)
	var b ctxwait.Bells
	got := make(chan bool, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		synctest.Test(t, func(t *testing.T) { got <- b.Wait(take, nil) })
	}()
	for b.Len() != 1 {
		runtime.Gosched()
	}
	token <- struct{}{}
	b.Ring() // rings no one: the waiter's bell is its bubble's
	<-ended
	assert.True(t, <-got)
}

// taker returns a Bells try that takes a token from c if one is there.
func taker(c chan struct{}) func() bool {
	return func() bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
}
