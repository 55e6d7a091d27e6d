package staleness_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/staleness"
)

func TestStatusListsTheSlowestWorkersAndTheWaiters(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := staleness.NewClock(3, 1, staleness.WithMaxWait(10*time.Second))
	ctx := context.Background()
	for _, w := range []int{0, 2} {
		_, err := c.Advance(ctx, w)
		require.NoError(t, err)
	}
	// Worker 0 at clock 1 may run one ahead of worker 1 at 0: its next
	// Advance, to 2, waits.
	done := make(chan error, 1)
	go func() {
		_, err := c.Advance(ctx, 0)
		done <- err
	}()
	require.Eventually(t, func() bool { return c.Status().Waiting == 1 }, 10*time.Second, time.Millisecond)
	s := c.Status()
	assert.Equal(t, c.String(), s.Name)
	assert.Equal(t, 3, s.Workers)
	assert.Equal(t, uint64(1), s.MaxSkew)
	assert.Equal(t, uint64(0), s.Min)
	assert.Equal(t, uint64(2), s.Max)
	assert.Equal(t, 3, s.Active)
	require.Len(t, s.Slowest, 3)
	assert.Equal(t, staleness.WorkerClock{Worker: 1, Clock: 0}, s.Slowest[0].WorkerClock)
	assert.Zero(t, s.Slowest[0].Goroutine, "worker 1 never advanced")
	c.Leave(1)
	require.NoError(t, <-done)
	assert.Zero(t, c.Status().Waiting)
}
