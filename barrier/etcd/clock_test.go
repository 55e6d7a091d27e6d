package etcd_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	etcdbarrier "github.com/syncwatch/syncwatch/barrier/etcd"
	"github.com/syncwatch/syncwatch/staleness"
)

// clocks makes one Clock per worker, each with a client of its own, and
// joins them.
func clocks(t *testing.T, p string, workers int, maxSkew uint64, opts ...etcdbarrier.Option) []*etcdbarrier.Clock {
	t.Helper()
	cs := make([]*etcdbarrier.Clock, workers)
	for w := range workers {
		cs[w] = etcdbarrier.NewClock(client(t, server), p, workers, maxSkew, opts...)
		require.NoError(t, cs[w].Join(t.Context(), w))
	}
	return cs
}

func closeClocks(t *testing.T, cli *clientv3.Client, p string, cs []*etcdbarrier.Clock) {
	t.Helper()
	for _, c := range cs {
		assert.NoError(t, c.Close())
	}
	requireClean(t, cli, p)
}

// A worker runs at most maxSkew iterations ahead of the slowest, across
// processes; when the slowest advances, the fast one goes on.
func TestClockBoundsTheSkew(t *testing.T) {
	p := prefix(t)
	cs := clocks(t, p, 2, 1, etcdbarrier.WithTimeout(time.Minute))
	now, err := cs[0].Advance(t.Context(), 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), now, "1 ahead of worker 1 at 0: within the skew")
	released := make(chan uint64)
	go func() {
		now, err := cs[0].Advance(context.Background(), 0)
		assert.NoError(t, err)
		released <- now
	}()
	select {
	case <-released:
		t.Fatal("worker 0 ran 2 ahead of worker 1")
	case <-time.After(300 * time.Millisecond):
	}
	_, err = cs[1].Advance(t.Context(), 1)
	require.NoError(t, err)
	select {
	case now := <-released:
		assert.Equal(t, uint64(2), now)
	case <-time.After(30 * time.Second):
		t.Fatal("worker 0 was not released")
	}
	closeClocks(t, client(t, server), p, cs)
}

// A wait that times out says why the slow worker is slow, from its
// process: here it is not in a syncwatch wait.
func TestClockTimeoutSaysWhy(t *testing.T) {
	p := prefix(t)
	const timeout = time.Second
	cs := clocks(t, p, 2, 0, etcdbarrier.WithTimeout(timeout))
	start := time.Now()
	now, err := cs[0].Advance(t.Context(), 0)
	assert.Less(t, time.Since(start), within(timeout))
	assert.Equal(t, uint64(1), now)
	assert.ErrorIs(t, err, staleness.ErrWaitTimeout)
	var ce *etcdbarrier.ClockWaitError
	require.ErrorAs(t, err, &ce)
	var we *staleness.WaitError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, []staleness.WorkerClock{{Worker: 1, Clock: 0}}, we.Slowest)
	require.Len(t, ce.Why, 1)
	assert.Contains(t, ce.Why[0].Reason, "alive")
	assert.Equal(t, "clock-wait-timeout", ce.ErrorType())
	closeClocks(t, client(t, server), p, cs)
}

// A worker whose lease expires can never catch up: the wait for it ends
// at once, saying so. One that leaves no longer holds the others back.
func TestClockDeadAndLeavingWorkers(t *testing.T) {
	p := prefix(t)
	cs := clocks(t, p, 3, 0, etcdbarrier.WithTimeout(time.Minute))
	var wg sync.WaitGroup
	var err0 error
	wg.Go(func() { _, err0 = cs[0].Advance(context.Background(), 0) })
	time.Sleep(200 * time.Millisecond)
	_, err := client(t, server).Revoke(t.Context(), etcdbarrier.ClockLeaseOf(cs[1], 1))
	require.NoError(t, err)
	wg.Wait()
	assert.ErrorIs(t, err0, etcdbarrier.ErrLeaseExpired)
	assert.False(t, errors.Is(err0, staleness.ErrWaitTimeout))
	var ce *etcdbarrier.ClockWaitError
	require.ErrorAs(t, err0, &ce)
	assert.Contains(t, ce.Error(), "lease expired at")

	// Worker 2 leaves; worker 1 is dead, so worker 0 still cannot go on.
	require.NoError(t, cs[2].Leave(t.Context(), 2))
	_, err = cs[0].Advance(t.Context(), 0)
	assert.ErrorIs(t, err, etcdbarrier.ErrLeaseExpired)
	closeClocks(t, client(t, server), p, cs)
}

func TestClockLeaveReleasesTheOthers(t *testing.T) {
	p := prefix(t)
	cs := clocks(t, p, 2, 0, etcdbarrier.WithTimeout(time.Minute))
	done := make(chan error)
	go func() {
		_, err := cs[0].Advance(context.Background(), 0)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, cs[1].Leave(t.Context(), 1))
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Leave did not release worker 0")
	}
	closeClocks(t, client(t, server), p, cs)
}
