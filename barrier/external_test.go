package barrier_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

// A goroutine blocked on a lock held by a goroutine waiting at an
// external barrier is explained through both waits.
func TestExplainGoroutineThroughAnExternalWait(t *testing.T) {
	requireCheckMode(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	mu := lockorder.NewMutex("aggregation_lock")
	holder := make(chan int64)
	release := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		mu.Lock()
		end := barrier.BeginExternalWait(barrier.ExternalBarrier, "cluster", "rank 3, generation 5")
		holder <- barrier.Goroutine()
		<-release
		end()
		end()
		mu.Unlock()
	}()
	h := <-holder
	blocked := make(chan int64)
	go func() {
		blocked <- barrier.Goroutine()
		mu.Lock()
		mu.Unlock() //nolint:staticcheck // the wait is the point
	}()
	b := <-blocked
	var w barrier.GoroutineWait
	require.Eventually(t, func() bool {
		w = barrier.ExplainGoroutine(b)
		return w.Waiting
	}, 10*time.Second, time.Millisecond)
	assert.Equal(t, "lock", w.Kind)
	assert.Equal(t, h, w.Holder)
	assert.True(t, strings.HasPrefix(w.WaitingFor, "lock aggregation_lock#"), w.WaitingFor)
	assert.Contains(t, w.Reason, "which is waiting for barrier cluster (rank 3, generation 5)")
	assert.WithinDuration(t, time.Now(), w.Since, time.Minute)

	hw := barrier.ExplainGoroutine(h)
	assert.True(t, hw.Waiting)
	assert.Equal(t, "barrier", hw.Kind)
	close(release)
	<-done
	require.Eventually(t, func() bool { return !barrier.ExplainGoroutine(b).Waiting }, 10*time.Second, time.Millisecond)
	assert.Panics(t, func() { barrier.BeginExternalWait("queue", "q", "") })
}

func TestExplainGoroutineNotWaiting(t *testing.T) {
	w := barrier.ExplainGoroutine(barrier.Goroutine())
	assert.False(t, w.Waiting)
	if w.State != "" { // empty when the rate of fresh dumps did not allow one
		assert.Contains(t, w.State, "is running")
	}
	assert.NotEqual(t, "has exited", w.State)
}
