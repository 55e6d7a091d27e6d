package barrier_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// Semantics 1: every rank gets the same generation, one more each round,
// and the action runs exactly once per generation, before anyone leaves.
func TestGenerationsCompleteInOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer lockordertest.VerifyNone(t, lockordertest.IncludeExpected())
	const parties, rounds = 8, 200
	var (
		actions   [rounds]atomic.Int32
		lastFreed atomic.Int64 // highest generation any rank has returned
	)
	b := barrier.New(parties, barrier.WithAction(func(g uint64) error {
		actions[g].Add(1)
		assert.Equal(t, int64(g)-1, lastFreed.Load(), "action ran after a rank of its generation returned")
		return nil
	}))
	lastFreed.Store(-1)
	got := make([][]uint64, parties)
	var wg sync.WaitGroup
	for r := range parties {
		wg.Go(func() {
			for range rounds {
				g, err := b.Await(context.Background(), r)
				if !assert.NoError(t, err) {
					return
				}
				lastFreed.Store(max(lastFreed.Load(), int64(g)))
				got[r] = append(got[r], g)
			}
		})
	}
	waitGroup(t, &wg, 30*time.Second)
	want := make([]uint64, rounds)
	for i := range want {
		want[i] = uint64(i)
	}
	for r := range parties {
		assert.Equal(t, want, got[r], "rank %d", r)
	}
	for g := range actions {
		assert.EqualValues(t, 1, actions[g].Load(), "action runs of generation %d", g)
	}
	gen, arrived := b.Current()
	assert.EqualValues(t, rounds, gen)
	assert.Empty(t, arrived)
}

func TestSinglePartyNeverWaits(t *testing.T) {
	runs := 0
	b := barrier.New(1, barrier.WithAction(func(uint64) error { runs++; return nil }))
	for i := range 3 {
		g, err := b.Await(context.Background(), 0)
		require.NoError(t, err)
		require.EqualValues(t, i, g)
	}
	require.Equal(t, 3, runs)
}

// The acceptance case: 32 parties, rank 17 never arrives. All 31
// others return one *BrokenError naming rank 17, within the bound plus
// 100ms.
func TestMissingRankBreaksGenerationForEveryone(t *testing.T) {
	defer goleak.VerifyNone(t)
	resetViolations(t)
	const parties, bound = 32, 300 * time.Millisecond
	b := barrier.New(parties, barrier.WithName("allreduce"), barrier.WithTimeout(bound))

	res := awaitAll(t, b, ranksExcept(parties, 17), 10*time.Second)

	require.Len(t, res, 31)
	var first *barrier.BrokenError
	require.ErrorAs(t, res[0].err, &first)
	for r, got := range res {
		assert.Same(t, first, got.err, "rank %d got a different error", r)
		assert.EqualValues(t, 0, got.gen, "rank %d", r)
		// Bounded by the timeout, not by anything else; the margin is
		// for a loaded machine, not a figure.
		assert.LessOrEqual(t, got.took, bound+5*time.Second, "rank %d returned late", r)
	}
	assert.ErrorIs(t, first, barrier.ErrBroken)
	assert.ErrorIs(t, first, context.DeadlineExceeded)
	assert.Equal(t, []int{17}, first.Missing)
	assert.ElementsMatch(t, ranksExcept(parties, 17), first.Arrived)
	assert.Equal(t, 32, first.Parties)
	assert.Equal(t, "allreduce", first.Barrier)
	assert.GreaterOrEqual(t, first.Waited, bound)
	assert.NotEqual(t, 17, first.BrokenBy)
	assert.Contains(t, first.Arrived, first.BrokenBy)
	require.Len(t, first.Why, 1)
	assert.Equal(t, barrier.MissingRank{Rank: 17, HolderRank: -1, Reason: "never arrived at this barrier"}, first.Why[0])
	assert.Contains(t, first.Error(), "barrier: broken: allreduce generation 0")
	assert.Contains(t, first.Error(), "31/32 arrived, missing [17]")
	assert.Contains(t, first.Error(), "rank 17: never arrived at this barrier")
	assert.Equal(t, "barrier-broken", first.ErrorType())

	if reporting() {
		vs := violations(barrier.KindBroken)
		require.Len(t, vs, 1)
		assert.Equal(t, "barrier", vs[0].Source)
		assert.Same(t, first, vs[0].Err)
		assert.False(t, vs[0].Expected)
		assert.Contains(t, vs[0].Message, "allreduce generation 0")
		assert.Contains(t, vs[0].Detail, "rank 17: never arrived at this barrier")
	}
}

// Semantics 2: a waiter's canceled context breaks the generation for all,
// with the context's error and cause.
func TestCanceledContextBreaksGeneration(t *testing.T) {
	defer goleak.VerifyNone(t)
	resetViolations(t)
	b := barrier.New(3)
	ctx, cancel := context.WithCancelCause(context.Background())
	errShutdown := errors.New("shutting down")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { _, errs[0] = b.Await(ctx, 0) })
	wg.Go(func() { _, errs[1] = b.Await(context.Background(), 1) })
	waitArrived(t, b, 0, 0, 1)
	cancel(errShutdown)
	waitGroup(t, &wg, 5*time.Second)

	var be *barrier.BrokenError
	require.ErrorAs(t, errs[0], &be)
	assert.Same(t, be, errs[1])
	assert.ErrorIs(t, be, context.Canceled)
	assert.ErrorIs(t, be, errShutdown)
	assert.Equal(t, []int{2}, be.Missing)
	assert.Equal(t, 0, be.BrokenBy)
	if reporting() {
		vs := violations(barrier.KindBroken)
		require.Len(t, vs, 1)
		assert.True(t, vs[0].Expected, "a canceled context is an expected break")
	}
}

// Semantics 2: the context's deadline bounds the wait when it is sooner
// than the barrier's timeout.
func TestContextDeadlineBoundsWait(t *testing.T) {
	b := barrier.New(2) // default timeout: ten minutes
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := b.Await(ctx, 0) // returns at all: the ten-minute timeout did not bound it
	assert.ErrorIs(t, err, barrier.ErrBroken)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// Semantics 3, made deterministic: the waiter notices its canceled context,
// then the generation completes before the waiter looks at it. The waiter
// succeeds, and the cancellation does not break the next generation (the
// marusama/cyclicbarrier bug).
func TestCompletionBeforeCancelIsNoticedWins(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(2)
	noticed, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	restore := barrier.SetGiveUpHook(func() {
		once.Do(func() { close(noticed); <-proceed })
	})
	defer restore()

	ctx, cancel := context.WithCancel(context.Background())
	var (
		gen0 uint64
		err0 error
		wg   sync.WaitGroup
	)
	wg.Go(func() { gen0, err0 = b.Await(ctx, 0) })
	waitArrived(t, b, 0, 0)
	cancel()
	<-noticed // rank 0 saw ctx.Done and is about to look at its generation
	g, err := b.Await(context.Background(), 1)
	require.NoError(t, err)
	require.EqualValues(t, 0, g)
	close(proceed)
	waitGroup(t, &wg, 5*time.Second)
	require.NoError(t, err0, "a generation that completed first must succeed")
	require.EqualValues(t, 0, gen0)

	res := awaitAll(t, b, []int{0, 1}, 5*time.Second)
	for r, got := range res {
		assert.NoError(t, got.err, "rank %d: a stale cancellation broke the next generation", r)
		assert.EqualValues(t, 1, got.gen)
	}
}

// Semantics 3: a done context does not stop the last rank from completing
// the generation.
func TestLastArriverWithDoneContextCompletes(t *testing.T) {
	b := barrier.New(2)
	var wg sync.WaitGroup
	var err0 error
	wg.Go(func() { _, err0 = b.Await(context.Background(), 0) })
	waitArrived(t, b, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Await(ctx, 1)
	require.NoError(t, err)
	waitGroup(t, &wg, 5*time.Second)
	require.NoError(t, err0)
}

// Semantics 4: a rank late for generations that broke without it gets each
// one's error at once, in order, and then joins the others.
func TestLateRankCollectsBrokenGenerationsThenJoins(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(3, barrier.WithTimeout(100*time.Millisecond))
	var broken [2]*barrier.BrokenError
	for gen := range 2 {
		res := awaitAll(t, b, []int{0, 1}, 5*time.Second)
		require.ErrorAs(t, res[0].err, &broken[gen])
		require.Same(t, broken[gen], res[1].err)
		require.EqualValues(t, gen, broken[gen].Generation)
		require.Equal(t, []int{2}, broken[gen].Missing)
	}
	require.NotSame(t, broken[0], broken[1])

	for gen := range 2 {
		// A late rank gets its generation's own error at once: had it
		// waited, it would be in a generation of its own.
		g, err := b.Await(context.Background(), 2)
		assert.EqualValues(t, gen, g)
		assert.Same(t, broken[gen], err, "late rank must get generation %d's own error", gen)
	}
	res := awaitAll(t, b, []int{0, 1, 2}, 5*time.Second)
	for r, got := range res {
		assert.NoError(t, got.err, "rank %d", r)
		assert.EqualValues(t, 2, got.gen, "rank %d", r)
	}
}

// Semantics 5: a second arrival of one rank is an error for the second
// caller only.
func TestDuplicateArrival(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(2, barrier.WithName("dup"))
	var wg sync.WaitGroup
	var err0 error
	wg.Go(func() { _, err0 = b.Await(context.Background(), 0) })
	waitArrived(t, b, 0, 0)

	g, err := b.Await(context.Background(), 0)
	require.ErrorIs(t, err, barrier.ErrDuplicateArrival)
	var de *barrier.DuplicateArrivalError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, barrier.DuplicateArrivalError{Barrier: "dup", Rank: 0, Generation: 0}, *de)
	assert.EqualValues(t, 0, g)
	assert.Equal(t, "barrier-duplicate-arrival", de.ErrorType())

	_, err = b.Await(context.Background(), 1)
	require.NoError(t, err)
	waitGroup(t, &wg, 5*time.Second)
	require.NoError(t, err0)
}

// Semantics 5 and the style guide: programmer errors panic with the
// package prefix.
func TestProgrammerErrorsPanic(t *testing.T) {
	b := barrier.New(2)
	assert.PanicsWithValue(t, "barrier: 0 parties, want at least 1", func() { barrier.New(0) })
	assert.PanicsWithValue(t, "barrier: -3 parties, want at least 1", func() { barrier.New(-3) })
	assert.PanicsWithValue(t, "barrier: rank 2 out of range [0, 2)", func() { b.Await(context.Background(), 2) })
	assert.PanicsWithValue(t, "barrier: rank -1 out of range [0, 2)", func() { b.Await(context.Background(), -1) })
	assert.PanicsWithValue(t, "barrier: rank 5 out of range [0, 2)", func() { b.Leave(5, nil) })
	assert.PanicsWithValue(t, "barrier: Await with nil Context", func() { b.Await(nil, 0) })
	assert.PanicsWithValue(t, "barrier: non-positive timeout", func() { barrier.WithTimeout(0) })
	assert.PanicsWithValue(t, "barrier: negative history", func() { barrier.WithHistory(-1) })
	var zero barrier.Barrier
	assert.PanicsWithValue(t, "barrier: Barrier not created with New", func() { zero.Await(context.Background(), 0) })
	assert.PanicsWithValue(t, "barrier: Barrier not created with New", func() { zero.Abort(nil) })
}

// Abort breaks the current generation for the ranks waiting and for those
// still to come; the next generation is unaffected.
func TestAbort(t *testing.T) {
	defer goleak.VerifyNone(t)
	resetViolations(t)
	b := barrier.New(3)
	errCheckpoint := errors.New("checkpoint failed")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Go(func() { _, errs[r] = b.Await(context.Background(), r) })
	}
	waitArrived(t, b, 0, 0, 1)
	b.Abort(errCheckpoint)
	waitGroup(t, &wg, 5*time.Second)

	var be *barrier.BrokenError
	require.ErrorAs(t, errs[0], &be)
	assert.Same(t, be, errs[1])
	assert.ErrorIs(t, be, barrier.ErrAborted)
	assert.ErrorIs(t, be, errCheckpoint)
	assert.Equal(t, -1, be.BrokenBy)
	assert.Equal(t, []int{2}, be.Missing)
	g, err := b.Await(context.Background(), 2)
	assert.EqualValues(t, 0, g)
	assert.Same(t, be, err, "the rank that had not arrived gets the aborted generation's error")

	// Abort with nobody there: every rank's next Await reports it.
	b.Abort(nil)
	var empty *barrier.BrokenError
	for r := range 3 {
		g, err := b.Await(context.Background(), r)
		assert.EqualValues(t, 1, g)
		if r == 0 {
			require.ErrorAs(t, err, &empty)
		}
		assert.Same(t, empty, err)
	}
	assert.Empty(t, empty.Arrived)
	assert.Equal(t, []int{0, 1, 2}, empty.Missing)
	assert.ErrorIs(t, empty, barrier.ErrAborted)

	res := awaitAll(t, b, []int{0, 1, 2}, 5*time.Second)
	for r, got := range res {
		assert.NoError(t, got.err, "rank %d", r)
		assert.EqualValues(t, 2, got.gen)
	}
	if reporting() {
		vs := violations(barrier.KindBroken)
		require.Len(t, vs, 2)
		assert.True(t, vs[0].Expected && vs[1].Expected, "aborts are expected breaks")
	}
}

// Leave: the others complete without the rank, the Leave that completes a
// generation runs the action, and the departed rank cannot wait again.
func TestLeave(t *testing.T) {
	defer goleak.VerifyNone(t)
	var actionGID atomic.Int64
	b := barrier.New(3, barrier.WithTimeout(200*time.Millisecond), barrier.WithAction(func(uint64) error {
		actionGID.Store(goid.ID())
		return nil
	}))
	errDied := errors.New("worker 2 died")
	var wg sync.WaitGroup
	res := make([]result, 2)
	for r := range 2 {
		wg.Go(func() {
			g, err := b.Await(context.Background(), r)
			res[r] = result{gen: g, err: err}
		})
	}
	waitArrived(t, b, 0, 0, 1)
	b.Leave(2, errDied)
	waitGroup(t, &wg, 5*time.Second)
	for r := range 2 {
		require.NoError(t, res[r].err)
		require.EqualValues(t, 0, res[r].gen)
	}
	assert.Equal(t, goid.ID(), actionGID.Load(), "the action runs in the goroutine whose Leave completed the generation")

	b.Leave(2, errors.New("ignored")) // leaving twice does nothing
	g, err := b.Await(context.Background(), 2)
	assert.EqualValues(t, 1, g)
	assert.ErrorIs(t, err, barrier.ErrLeft)
	assert.ErrorIs(t, err, errDied)
	var le *barrier.LeftError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 2, le.Rank)

	r2 := awaitAll(t, b, []int{0, 1}, 5*time.Second)
	assert.NoError(t, r2[0].err)
	assert.NoError(t, r2[1].err)

	// A break names the departed rank apart from the missing one.
	_, err = b.Await(context.Background(), 0)
	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, []int{1}, be.Missing)
	assert.Equal(t, []int{2}, be.Left)
	assert.Contains(t, be.Error(), "1/3 arrived, missing [1], left [2]")
	_, err = b.Await(context.Background(), 1) // collect the late error
	assert.Same(t, be, err)
}

// An action's error breaks its generation for everyone, with nobody
// missing; the next generation is unaffected.
func TestActionErrorBreaksGeneration(t *testing.T) {
	defer goleak.VerifyNone(t)
	errReduce := errors.New("reduce failed")
	b := barrier.New(3, barrier.WithAction(func(g uint64) error {
		if g == 1 {
			return errReduce
		}
		return nil
	}))
	for gen := range 3 {
		res := awaitAll(t, b, []int{0, 1, 2}, 5*time.Second)
		for r, got := range res {
			assert.EqualValues(t, gen, got.gen)
			if gen != 1 {
				assert.NoError(t, got.err, "rank %d generation %d", r, gen)
				continue
			}
			var be *barrier.BrokenError
			if assert.ErrorAs(t, got.err, &be) {
				assert.Same(t, res[0].err, got.err)
				assert.ErrorIs(t, be, errReduce)
				assert.Empty(t, be.Missing)
				assert.Len(t, be.Arrived, 3)
				assert.Equal(t, be.Arrived[2], be.BrokenBy, "the last arriver ran the action")
			}
		}
	}
}

// A panicking action breaks its generation, releases the waiters and
// re-panics in the last arriver; the barrier stays usable.
func TestActionPanicBreaksAndRepanics(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(3, barrier.WithAction(func(g uint64) error {
		if g == 0 {
			panic("boom")
		}
		return nil
	}))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Go(func() { _, errs[r] = b.Await(context.Background(), r) })
	}
	waitArrived(t, b, 0, 0, 1)
	assert.PanicsWithValue(t, "boom", func() { b.Await(context.Background(), 2) })
	waitGroup(t, &wg, 5*time.Second)
	var be *barrier.BrokenError
	require.ErrorAs(t, errs[0], &be)
	assert.Same(t, be, errs[1])
	assert.ErrorContains(t, be, "action for generation 0 panicked: boom")
	assert.Empty(t, be.Missing)

	res := awaitAll(t, b, []int{0, 1, 2}, 5*time.Second)
	for r, got := range res {
		assert.NoError(t, got.err, "rank %d", r)
		assert.EqualValues(t, 1, got.gen)
	}
}

// A waiter that gives up while the action runs breaks the generation: the
// action's result is dropped and everyone, the last arriver included, gets
// the same error. No wait outlasts its bound because of an action.
func TestCancelDuringActionBreaks(t *testing.T) {
	defer goleak.VerifyNone(t)
	inAction, release := make(chan struct{}), make(chan struct{})
	b := barrier.New(2, barrier.WithAction(func(g uint64) error {
		if g == 0 {
			close(inAction)
			<-release
		}
		return nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var err0, err1 error
	wg.Go(func() { _, err0 = b.Await(ctx, 0) })
	waitArrived(t, b, 0, 0)
	wg.Go(func() { _, err1 = b.Await(context.Background(), 1) })
	<-inAction
	cancel()
	require.Eventually(t, func() bool { g, _ := b.Current(); return g == 1 }, 5*time.Second, time.Millisecond)
	close(release)
	waitGroup(t, &wg, 5*time.Second)
	var be *barrier.BrokenError
	require.ErrorAs(t, err0, &be)
	assert.Same(t, be, err1)
	assert.ErrorIs(t, be, context.Canceled)
	assert.Empty(t, be.Missing)
}

// A violation handler that panics in a waiter abandons the rank's wait:
// the generation breaks instead of waiting for a rank that is gone.
func TestPanickingHandlerAbandonsWait(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == barrier.KindSlow {
			panic("handler")
		}
	}))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {})) })
	b := barrier.New(2, barrier.WithTimeout(200*time.Millisecond))
	assert.PanicsWithValue(t, "handler", func() { b.Await(context.Background(), 0) })
	g, err := b.Await(context.Background(), 1)
	assert.EqualValues(t, 0, g)
	assert.ErrorIs(t, err, barrier.ErrBroken)
	assert.ErrorContains(t, err, "rank 0 left Await without returning")
}

func TestNameAndParties(t *testing.T) {
	a, b := barrier.New(4), barrier.New(4, barrier.WithName("ps"))
	assert.Regexp(t, `^barrier#\d+$`, a.Name())
	assert.Equal(t, "ps", b.Name())
	assert.Equal(t, 4, b.Parties())
	assert.NotEqual(t, a.Name(), barrier.New(4).Name())
}
