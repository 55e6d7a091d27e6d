//go:build !syncwatch_off

package staleness_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/staleness"
)

// timeouts returns the clock-wait-timeout violations of clock c, and
// marks every violation so far as seen, failing t if there is any other.
func timeouts(t *testing.T, c *staleness.Clock) []lockorder.Violation {
	t.Helper()
	var out []lockorder.Violation
	for _, v := range lockorder.Violations() {
		if v.Kind == staleness.KindClockWaitTimeout && strings.HasPrefix(v.Message, c.String()+":") {
			out = append(out, v)
		}
	}
	require.NoError(t, lockordertest.Find(lockordertest.IgnoreKind(staleness.KindClockWaitTimeout)))
	return out
}

func attr(v lockorder.Violation, key string) (attribute.Value, bool) {
	for _, kv := range v.Attrs {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func TestAdvanceTimeoutNamesSlowestWorkers(t *testing.T) {
	c := staleness.NewClock(4, 0)
	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	_, err := c.Advance(short, 3) // worker 3 at 1 waits for 0, 1 and 2
	require.ErrorIs(t, err, staleness.ErrWaitTimeout)

	ctx1, cancel1 := context.WithCancel(context.Background())
	done1 := advanceAsync(ctx1, c, 1) // worker 1 at 1 waits for 0 and 2
	require.Eventually(t, func() bool { return c.Clock(1) == 1 }, 5*time.Second, time.Millisecond)

	start := time.Now() // before the deadline is set: see below
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	clk, err := c.Advance(ctx, 3) // at 2, needs everyone at 2
	require.Error(t, err)
	cancel1()
	assert.ErrorIs(t, receive(t, done1).err, context.Canceled)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	assert.Equal(t, uint64(2), clk)
	assert.Equal(t, uint64(2), c.Clock(3), "the clock stays advanced")
	assert.ErrorIs(t, err, staleness.ErrWaitTimeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	var we *staleness.WaitError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, 3, we.Worker)
	assert.Equal(t, uint64(2), we.Clock)
	assert.Equal(t, uint64(2), we.Need)
	assert.Equal(t, []staleness.WorkerClock{{0, 0}, {2, 0}, {1, 1}}, we.Slowest, "slowest first")
	// Waited is counted from inside Advance, a little after the deadline
	// was set: close to the bound, not necessarily over it.
	assert.Greater(t, we.Waited, 20*time.Millisecond)
	assert.Equal(t, "clock-wait-timeout", we.ErrorType())
	assert.Contains(t, err.Error(), "worker 3 at clock 2 gave up after")
	assert.Contains(t, err.Error(), "workers 0 (clock 0), 2 (clock 0), 1 (clock 1) to reach clock 2")

	vs := timeouts(t, c)
	require.Len(t, vs, 2, "every timed-out Advance is reported, a canceled one is not")
	v := vs[1]
	assert.Equal(t, "staleness", v.Source)
	assert.False(t, v.Expected, "a worker held back past the bound is a bug signal")
	assert.Contains(t, v.Message, "worker 3 at clock 2 timed out after")
	assert.Contains(t, v.Message, "workers 0 (clock 0), 2 (clock 0), 1 (clock 1)")
	assert.Contains(t, v.Detail, "worker 0 (clock 0) has not advanced yet")
	assert.Regexp(t, `worker 1 \(clock 1, goroutine \d+\) is waiting for clock `+c.String(), v.Detail)
	assert.Same(t, we, v.Err)
	assert.Equal(t, we.Waited, v.Waited)
	require.NotEmpty(t, v.Stack)
	assert.Contains(t, v.Stack[0].Function, "TestAdvanceTimeoutNamesSlowestWorkers", "the stack starts at the caller of Advance")
	slowest, ok := attr(v, "syncwatch.clock.slowest_workers")
	require.True(t, ok)
	assert.Equal(t, []int64{0, 2, 1}, slowest.AsInt64Slice())
	worker, ok := attr(v, "syncwatch.worker")
	require.True(t, ok)
	assert.Equal(t, int64(3), worker.AsInt64())
}

func TestAdvanceContextDeadlineIsATimeout(t *testing.T) {
	c := staleness.NewClock(2, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Advance(ctx, 0)
	assert.ErrorIs(t, err, staleness.ErrWaitTimeout)
	assert.Len(t, timeouts(t, c), 1)
}

//go:noinline
func stuckOnLock(m *lockorder.Mutex) {
	m.Lock()
	m.Unlock()
}

// TestTimeoutSaysWhatTheSlowWorkerWaitsFor is the incident's all-reduce
// hang: one worker is blocked on a lock, and the others, instead of
// "barrier_count=31/32, waiting...", are told which worker and which lock.
func TestTimeoutSaysWhatTheSlowWorkerWaitsFor(t *testing.T) {
	c := staleness.NewClock(2, 1, staleness.WithMaxWait(30*time.Millisecond))
	ctx := context.Background()
	agg := lockorder.NewMutex("aggregation_lock")
	agg.Lock()

	done := make(chan struct{})
	gids := make(chan int64, 1)
	go func() {
		defer close(done)
		gids <- goid.ID()
		_, err := c.Advance(ctx, 1) // clock 1: 1 ahead of worker 0, fine
		assert.NoError(t, err)
		stuckOnLock(agg)
	}()
	gid := <-gids
	require.Eventually(t, func() bool {
		w := waitfor.Lookup(gid)
		return w != nil && w.Kind == waitfor.KindLock && strings.HasPrefix(w.Name(), "aggregation_lock#")
	}, 5*time.Second, time.Millisecond, "worker 1 blocks on the lock")

	for range 2 {
		_, err := c.Advance(ctx, 0) // clocks 1 and 2: fine
		require.NoError(t, err)
	}
	_, err := c.Advance(ctx, 0) // clock 3 needs worker 1 at 2
	require.ErrorIs(t, err, staleness.ErrWaitTimeout)
	agg.Unlock()
	<-done

	vs := timeouts(t, c)
	require.Len(t, vs, 1)
	assert.Regexp(t, `worker 1 \(clock 1, goroutine \d+\) is waiting for lock aggregation_lock#\d+, held by goroutine \d+`, vs[0].Detail)
	assert.Contains(t, vs[0].String(), "is waiting for lock aggregation_lock#")
}

func TestWaitIsRegistered(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	c := staleness.NewClock(2, 0)
	ctx, cancel := context.WithCancel(context.Background())
	ch := advanceAsync(ctx, c, 1)
	require.Eventually(t, func() bool {
		for _, w := range waitfor.All() {
			if w.Kind == "clock" && w.Object == c.String() {
				return assert.Contains(t, w.Detail, "worker 1 at clock 1 waits for every worker to reach clock 1")
			}
		}
		return false
	}, 5*time.Second, time.Millisecond)
	cancel()
	receive(t, ch)
	for _, w := range waitfor.All() {
		assert.NotEqual(t, c.String(), w.Object, "the wait is unregistered when Advance returns")
	}
}
