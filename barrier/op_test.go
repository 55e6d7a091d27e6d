package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
)

// The RDMA incident in one process: ranks 0 and 1 run the model's
// all-reduce twice, then rank 1 goes on to the control bus's while rank 0
// runs the model's a third time. The generation breaks at once, not at
// the timeout, and both ranks get one error that says who is at which
// operation and how many of each they have run.
func TestCollectiveMismatchBreaksAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	resetViolations(t)
	b := barrier.New(3, barrier.WithName("tp"), barrier.WithTimeout(time.Minute))
	for range 2 {
		res := awaitAllOps(t, b, map[int]string{0: "model.all_sum", 1: "model.all_sum", 2: ""})
		for r, x := range res {
			require.NoError(t, x.err, "rank %d", r)
		}
	}
	start := time.Now()
	res := awaitAllOps(t, b, map[int]string{0: "model.all_sum", 1: "bus.all_sum"})
	assert.Less(t, time.Since(start), 10*time.Second, "a mismatch must not wait for the timeout")
	require.Error(t, res[0].err)
	assert.Same(t, res[0].err, res[1].err, "one verdict for the generation")
	err := res[0].err
	assert.ErrorIs(t, err, barrier.ErrBroken)
	assert.ErrorIs(t, err, barrier.ErrCollectiveMismatch)
	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "collective-mismatch", be.ErrorType())
	assert.Equal(t, []int{2}, be.Missing)
	var me *barrier.MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, uint64(2), me.Generation)
	require.Len(t, me.Ops, 2)
	byOp := map[string][]int{}
	for _, o := range me.Ops {
		byOp[o.Op] = o.Ranks
	}
	assert.Equal(t, map[string][]int{"model.all_sum": {0}, "bus.all_sum": {1}}, byOp)
	counts := map[int]string{}
	for _, r := range me.Ranks {
		counts[r.Rank] = barrier.FormatOpCounts(r.Counts)
	}
	assert.Equal(t, "{model.all_sum: 3}", counts[0])
	assert.Equal(t, "{bus.all_sum: 1, model.all_sum: 2}", counts[1])
	assert.Contains(t, err.Error(), "rank 0 at model.all_sum")
	assert.Contains(t, err.Error(), "rank 1 at bus.all_sum")

	if reporting() {
		vs := violations(barrier.KindCollectiveMismatch)
		require.Len(t, vs, 1)
		assert.ErrorIs(t, vs[0].Err, barrier.ErrCollectiveMismatch)
	}
	// Rank 2 collects the broken generation, and the ranks are in step.
	_, err2 := b.Await(t.Context(), 2)
	assert.Same(t, err, err2)
	res = awaitAllOps(t, b, map[int]string{0: "x", 1: "x", 2: "x"})
	for r, x := range res {
		assert.NoError(t, x.err, "rank %d", r)
		assert.Equal(t, uint64(3), x.gen)
	}
}

func TestUnlabelledArrivalsAreNotChecked(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(3, barrier.WithTimeout(time.Minute))
	res := awaitAllOps(t, b, map[int]string{0: "", 1: "a", 2: ""})
	for r, x := range res {
		assert.NoError(t, x.err, "rank %d", r)
	}
}

func TestOpCountsAreBounded(t *testing.T) {
	var c barrier.OpCounts
	for i := range barrier.MaxOpLabels + 10 {
		c.Add(fmt.Sprintf("op%03d", i))
	}
	assert.Equal(t, uint64(2), c.Add("op000"))
	s := c.Snapshot()
	require.Len(t, s, barrier.MaxOpLabels+1)
	assert.Equal(t, barrier.OpCount{Op: barrier.OtherOps, Count: 10}, s[0])
	assert.Equal(t, "", barrier.OpOf())
	assert.Equal(t, "b", barrier.OpOf(barrier.Op("a"), nil, barrier.Op("b")))
}

func TestMismatchErrorTextIsBounded(t *testing.T) {
	var arrivals []barrier.RankOps
	for r := range 1000 {
		op := "a"
		if r%2 == 1 {
			op = "b"
		}
		arrivals = append(arrivals, barrier.RankOps{Rank: r, Op: op, Counts: []barrier.OpCount{{Op: op, Count: 1}}})
	}
	e := barrier.NewMismatchError("wide", 4, arrivals)
	assert.Less(t, len(e.Error()), 8<<10)
	assert.True(t, strings.Contains(e.Error(), "more ranks"), e.Error())
	assert.True(t, errors.Is(e, barrier.ErrCollectiveMismatch))
}

// awaitAllOps runs Await for each rank of ops, labelled with its op, and
// returns the results by rank.
func awaitAllOps(t *testing.T, b *barrier.Barrier, ops map[int]string) map[int]result {
	t.Helper()
	var (
		mu  sync.Mutex
		out = map[int]result{}
		wg  sync.WaitGroup
	)
	for r, op := range ops {
		wg.Go(func() {
			var opts []barrier.AwaitOption
			if op != "" {
				opts = append(opts, barrier.Op(op))
			}
			gen, err := b.Await(context.Background(), r, opts...)
			mu.Lock()
			out[r] = result{gen: gen, err: err}
			mu.Unlock()
		})
	}
	waitGroup(t, &wg, 30*time.Second)
	return out
}
