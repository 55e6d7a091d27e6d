package staleness_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/staleness"
)

// advanceAsync runs Advance on a new goroutine and delivers its result.
type result struct {
	clock uint64
	err   error
}

func advanceAsync(ctx context.Context, c *staleness.Clock, worker int) <-chan result {
	ch := make(chan result, 1)
	go func() {
		clk, err := c.Advance(ctx, worker)
		ch <- result{clk, err}
	}()
	return ch
}

// blocked asserts that nothing arrives on ch for a little while.
func blocked(t *testing.T, ch <-chan result) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("Advance returned %d, %v; want it to wait", r.clock, r.err)
	case <-time.After(20 * time.Millisecond):
	}
}

func receive(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("Advance did not return")
		return result{}
	}
}

func TestNewClockPanics(t *testing.T) {
	assert.PanicsWithValue(t, "staleness: NewClock with 0 workers", func() { staleness.NewClock(0, 1) })
	assert.PanicsWithValue(t, "staleness: NewClock with -3 workers", func() { staleness.NewClock(-3, 1) })
	assert.PanicsWithValue(t, "staleness: non-positive max wait", func() { staleness.WithMaxWait(0) })
	assert.PanicsWithValue(t, "staleness: non-positive max wait", func() { staleness.WithMaxWait(-time.Second) })
}

func TestWorkerOutOfRangePanics(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	c := staleness.NewClock(3, 1)
	ctx := context.Background()
	for _, w := range []int{-1, 3, 100} {
		want := "staleness: worker " + strconv.Itoa(w) + " out of range [0, 3)"
		assert.PanicsWithValue(t, want, func() { _, _ = c.Advance(ctx, w) })
		assert.PanicsWithValue(t, want, func() { c.Leave(w) })
		assert.PanicsWithValue(t, want, func() { c.Clock(w) })
	}
	var nilCtx context.Context
	assert.PanicsWithValue(t, "staleness: Advance with nil Context", func() { _, _ = c.Advance(nilCtx, 0) })
	assert.Equal(t, []uint64{0, 0, 0}, c.Clocks(), "a panicking call changes nothing")
}

func TestDefaultMaxWaitIsBounded(t *testing.T) {
	assert.Equal(t, 10*time.Minute, staleness.DefaultMaxWait)
	assert.Equal(t, staleness.DefaultMaxWait, staleness.MaxWaitOf(staleness.NewClock(2, 0)))
	assert.Equal(t, time.Second, staleness.MaxWaitOf(staleness.NewClock(2, 0, nil, staleness.WithMaxWait(time.Second))),
		"a nil option is ignored")
}

func TestAdvanceWithinSkewDoesNotWait(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	c := staleness.NewClock(2, 2)
	ctx := context.Background()
	for want := uint64(1); want <= 2; want++ {
		got, err := c.Advance(ctx, 0)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Equal(t, 2, c.Workers())
	assert.Equal(t, uint64(2), c.MaxSkew())
	assert.Equal(t, uint64(0), c.Min())

	// Clock 3 is 3 ahead of worker 1: it waits, and an already canceled
	// context makes it give up at once, with the clock advanced.
	done, cancel := context.WithCancel(ctx)
	cancel()
	got, err := c.Advance(done, 0)
	assert.Equal(t, uint64(3), got)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, uint64(3), c.Clock(0))

	// A done context does not stop an Advance that need not wait.
	got, err = c.Advance(done, 1)
	assert.NoError(t, err)
	assert.Equal(t, uint64(1), got)
}

func TestAdvanceWaitsForSlowest(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	c := staleness.NewClock(3, 1)
	ctx := context.Background()
	_, err := c.Advance(ctx, 0)
	require.NoError(t, err)

	ch := advanceAsync(ctx, c, 0) // clock 2, needs min >= 1
	blocked(t, ch)
	_, err = c.Advance(ctx, 1)
	require.NoError(t, err)
	blocked(t, ch) // worker 2 is still at 0
	_, err = c.Advance(ctx, 2)
	require.NoError(t, err)
	r := receive(t, ch)
	assert.NoError(t, r.err)
	assert.Equal(t, uint64(2), r.clock)
	assert.Equal(t, []uint64{2, 1, 1}, c.Clocks())
	assert.Equal(t, uint64(1), c.Min())
}

func TestSkewZeroIsBulkSynchronous(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	const workers, rounds = 4, 20
	c := staleness.NewClock(workers, 0)
	ctx := context.Background()
	var mu sync.Mutex
	finished := make([]int, rounds+1) // workers that finished each round
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := 1; r <= rounds; r++ {
				mu.Lock()
				finished[r]++
				mu.Unlock()
				clk, err := c.Advance(ctx, w)
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, uint64(r), clk)
				mu.Lock()
				assert.Equal(t, workers, finished[r], "round %d: worker %d passed before every worker finished", r, w)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, uint64(rounds), c.Min())
}

func TestAdvanceCanceledIsNotATimeout(t *testing.T) {
	defer lockordertest.VerifyNone(t) // no clock-wait-timeout either
	c := staleness.NewClock(2, 0)
	ctx, cancel := context.WithCancel(context.Background())
	ch := advanceAsync(ctx, c, 0)
	blocked(t, ch)
	cancel()
	r := receive(t, ch)
	assert.Equal(t, uint64(1), r.clock)
	assert.ErrorIs(t, r.err, context.Canceled)
	assert.NotErrorIs(t, r.err, staleness.ErrWaitTimeout)
	var we *staleness.WaitError
	require.ErrorAs(t, r.err, &we)
	assert.Equal(t, "clock-wait-canceled", we.ErrorType())
	assert.Equal(t, []staleness.WorkerClock{{Worker: 1, Clock: 0}}, we.Slowest)
	assert.Equal(t, uint64(1), c.Clock(0), "the clock stays advanced")
}

func TestLeaveReleasesWaiters(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	c := staleness.NewClock(3, 0)
	ctx := context.Background()
	ch0 := advanceAsync(ctx, c, 0)
	ch1 := advanceAsync(ctx, c, 1)
	blocked(t, ch0)
	blocked(t, ch1)
	c.Leave(2) // worker 2 died at clock 0: it no longer holds 0 and 1 back
	for _, ch := range []<-chan result{ch0, ch1} {
		r := receive(t, ch)
		assert.NoError(t, r.err)
		assert.Equal(t, uint64(1), r.clock)
	}
	assert.Equal(t, 2, c.Active())
	assert.Equal(t, uint64(1), c.Min())
}

func TestAdvanceAfterLeaveIsAnError(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	c := staleness.NewClock(2, 5)
	ctx := context.Background()
	_, err := c.Advance(ctx, 1)
	require.NoError(t, err)
	c.Leave(1)
	clk, err := c.Advance(ctx, 1)
	assert.Equal(t, uint64(1), clk)
	assert.ErrorIs(t, err, staleness.ErrLeft)
	var le *staleness.LeftError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, staleness.LeftError{Worker: 1, Clock: 1}, *le)
	assert.Equal(t, "worker-left", le.ErrorType())
	assert.EqualError(t, err, "staleness: worker 1 has left the clock (at clock 1)")
	assert.Equal(t, uint64(1), c.Clock(1), "a left worker does not advance")
}

func TestLeaveWhileWaiting(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	c := staleness.NewClock(2, 0)
	ch := advanceAsync(context.Background(), c, 0)
	blocked(t, ch)
	c.Leave(0) // a supervisor declares worker 0 dead while it waits
	r := receive(t, ch)
	assert.ErrorIs(t, r.err, staleness.ErrLeft)
	assert.Equal(t, uint64(1), r.clock)
}

func TestLeaveAll(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	c := staleness.NewClock(3, 2)
	ctx := context.Background()
	for w, n := range []int{1, 2, 0} {
		for range n {
			_, err := c.Advance(ctx, w)
			require.NoError(t, err)
		}
	}
	for w := range 3 {
		c.Leave(w)
		c.Leave(w) // idempotent
	}
	assert.Zero(t, c.Active())
	assert.Equal(t, uint64(2), c.Min(), "with every worker gone the minimum is the largest clock")
	for w := range 3 {
		_, err := c.Advance(ctx, w)
		assert.ErrorIs(t, err, staleness.ErrLeft)
	}
	assert.Equal(t, []uint64{1, 2, 0}, c.Clocks())
}

// TestConcurrentSSP runs many workers through many iterations and checks
// the SSP invariant at every return of Advance and from an observer.
func TestConcurrentSSP(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	const workers, iters, skew = 24, 200, 2
	c := staleness.NewClock(workers, skew)
	ctx := context.Background()

	stop := make(chan struct{})
	var observer sync.WaitGroup
	observer.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			clocks := c.Clocks()
			lo, hi := clocks[0], clocks[0]
			for _, clk := range clocks {
				lo, hi = min(lo, clk), max(hi, clk)
			}
			// A worker raises its clock before it waits, so one that
			// waits is at most skew+1 ahead.
			assert.LessOrEqual(t, hi-lo, uint64(skew+1), "clocks %v", clocks)
			time.Sleep(50 * time.Microsecond)
		}
	})

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 1; i <= iters; i++ {
				clk, err := c.Advance(ctx, w)
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, uint64(i), clk)
				// The minimum never decreases, so the bound still holds.
				assert.LessOrEqual(t, clk-c.Min(), uint64(skew))
			}
		})
	}
	wg.Wait()
	close(stop)
	observer.Wait()
	assert.Equal(t, uint64(iters), c.Min())
	for w := range workers {
		c.Leave(w)
	}
	assert.Zero(t, c.Active())
}
