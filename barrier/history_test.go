package barrier_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// runWithStraggler runs generation gen of a 3-party barrier with rank
// last arriving after the two others are waiting.
func runWithStraggler(t *testing.T, b *barrier.Barrier, gen uint64, last int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, r := range ranksExcept(3, last) {
		wg.Go(func() {
			_, err := b.Await(context.Background(), r)
			assert.NoError(t, err)
		})
	}
	waitArrived(t, b, gen, ranksExcept(3, last)...)
	time.Sleep(2 * time.Millisecond)
	_, err := b.Await(context.Background(), last)
	require.NoError(t, err)
	waitGroup(t, &wg, 5*time.Second)
}

// Semantics 9: the flight recorder keeps each rank's arrival and the
// straggler of the last K generations.
func TestHistoryRecordsArrivalsAndStragglers(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(3)
	for gen := range 4 {
		runWithStraggler(t, b, uint64(gen), gen%3)
	}
	recs := b.History()
	require.Len(t, recs, 4)
	for gen, rec := range recs {
		assert.EqualValues(t, gen, rec.Generation)
		assert.False(t, rec.Broken)
		assert.Equal(t, gen%3, rec.Straggler)
		require.Len(t, rec.Arrivals, 3)
		assert.Equal(t, gen%3, rec.Arrivals[2].Rank, "the straggler arrived last")
		assert.Equal(t, rec.Arrivals[0].At, rec.Start)
		assert.Equal(t, rec.Arrivals[2].At.Sub(rec.Start), rec.Lag)
		assert.GreaterOrEqual(t, rec.Lag, 2*time.Millisecond)
		assert.False(t, rec.End.Before(rec.Arrivals[2].At))
		assert.NotZero(t, rec.Arrivals[0].Goroutine)
		assert.Contains(t, rec.String(), "completed, straggler rank")
	}
	// History returns copies.
	recs[0].Arrivals[0].Rank = 99
	assert.NotEqual(t, 99, b.History()[0].Arrivals[0].Rank)
}

func TestWithHistoryBoundsTheRecorder(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(3, barrier.WithHistory(2))
	for gen := range 5 {
		runWithStraggler(t, b, uint64(gen), 1)
	}
	recs := b.History()
	require.Len(t, recs, 2)
	assert.EqualValues(t, 3, recs[0].Generation)
	assert.EqualValues(t, 4, recs[1].Generation)

	none := barrier.New(1, barrier.WithHistory(0))
	_, err := none.Await(context.Background(), 0)
	require.NoError(t, err)
	assert.Empty(t, none.History())
}

// A BrokenError carries the flight recorder, ending with its own
// generation, and its report shows it.
func TestBrokenErrorCarriesHistory(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(3, barrier.WithTimeout(100*time.Millisecond))
	runWithStraggler(t, b, 0, 2)
	res := awaitAll(t, b, []int{0, 1}, 5*time.Second)
	var be *barrier.BrokenError
	require.ErrorAs(t, res[0].err, &be)
	require.Len(t, be.History, 2)
	assert.Equal(t, 2, be.History[0].Straggler)
	last := be.History[1]
	assert.True(t, last.Broken)
	assert.EqualValues(t, 1, last.Generation)
	assert.Equal(t, -1, last.Straggler)
	assert.Equal(t, []int{2}, last.Missing)
	assert.Same(t, be.Cause, last.Cause)
	report := be.Report()
	assert.Contains(t, report, "flight recorder, last 2 generations")
	assert.Contains(t, report, "generation 0: completed, straggler rank 2")
	assert.Contains(t, report, "generation 1: broken after")
	assert.Contains(t, report, "rank 2: not waiting in syncwatch (running, or blocked elsewhere)")
	_, err := b.Await(context.Background(), 2)
	assert.Same(t, be, err)
}

// Semantics 8: halfway through the bound with ranks missing, one
// barrier-slow report per generation, however many are waiting; it is
// expected, so VerifyNone does not fail on it. The generation still
// completes when the rank arrives in time.
func TestSlowGenerationWarnsOnce(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	b := barrier.New(4, barrier.WithName("sync"), barrier.WithTimeout(600*time.Millisecond))
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for r := range 3 {
		wg.Go(func() { _, errs[r] = b.Await(context.Background(), r) })
	}
	require.Eventually(t, func() bool { return len(violations(barrier.KindSlow)) > 0 },
		5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond) // let the other two waiters pass halfway too
	g, err := b.Await(context.Background(), 3)
	require.NoError(t, err, "the rank arrived before the bound")
	require.EqualValues(t, 0, g)
	waitGroup(t, &wg, 5*time.Second)
	for r := range 3 {
		require.NoError(t, errs[r])
	}

	slow := violations(barrier.KindSlow)
	require.Len(t, slow, 1, "one early warning per generation")
	assert.True(t, slow[0].Expected)
	assert.Equal(t, "barrier", slow[0].Source)
	assert.Contains(t, slow[0].Message, "barrier sync generation 0: 3/4 arrived, missing [3] after")
	assert.Contains(t, slow[0].Detail, "rank 3: never arrived at this barrier")
	assert.NoError(t, lockordertest.Find(), "an expected violation does not fail VerifyNone")

	// A prompt generation makes no report.
	res := awaitAll(t, b, []int{0, 1, 2, 3}, 5*time.Second)
	require.NoError(t, res[0].err)
	assert.Len(t, violations(barrier.KindSlow), 1)
}

// Semantics 8 with a context deadline sooner than the barrier's timeout:
// the warning comes halfway to the deadline, the break at it.
func TestSlowWarningHalfwayToContextDeadline(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	b := barrier.New(2, barrier.WithName("ctxbound")) // ten-minute timeout
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.Await(ctx, 0)
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, took, 5*time.Minute, "ended by the context's deadline, not the barrier's ten-minute timeout")
	slow := violations(barrier.KindSlow)
	require.Len(t, slow, 1)
	assert.Contains(t, slow[0].Message, "barrier ctxbound generation 0: 1/2 arrived, missing [1] after")
	assert.InDelta(t, 200*time.Millisecond, slow[0].Time.Sub(start), float64(150*time.Millisecond))
	_, err = b.Await(context.Background(), 1)
	assert.ErrorIs(t, err, barrier.ErrBroken)
}
