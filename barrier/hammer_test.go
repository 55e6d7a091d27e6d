package barrier_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

// TestHammerRandomCancellations runs thousands of generations in which
// ranks give up at random moments, racing completion, and checks the
// barrier's promises on every one:
//
//   - every call returns (the barrier's own timeout is never what ends a
//     wait, and the test's watchdog never fires);
//   - the k-th call of every rank is for generation k: ranks never drift;
//   - for each generation, every rank got the same outcome: success for
//     all, or one and the same *BrokenError;
//   - a rank that succeeds for generation g saw every rank arrive for g
//     (and so did the action, which ran exactly once);
//   - a broken generation had someone in it, and was broken by one of the
//     ranks that were in it, through its own context.
func TestHammerRandomCancellations(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Cleanup(lockorder.Reset) // forget the broken generations' reports
	const parties = 4
	gens := 10000
	if testing.Short() {
		gens = 2000
	}
	var (
		arrived  = make([][parties]atomic.Bool, gens) // rank r called Await for generation g
		actions  = make([]atomic.Int32, gens)
		outcomes = make([][parties]error, gens)
	)
	allArrived := func(g uint64) bool {
		for r := range parties {
			if !arrived[g][r].Load() {
				return false
			}
		}
		return true
	}
	b := barrier.New(parties, barrier.WithTimeout(20*time.Second), barrier.WithHistory(8),
		barrier.WithAction(func(g uint64) error {
			actions[g].Add(1)
			assert.True(t, allArrived(g), "action of generation %d ran before every rank arrived", g)
			return nil
		}))

	var wg sync.WaitGroup
	for r := range parties {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 42))
			for k := range gens {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if rng.IntN(16) == 0 {
					// Give up after 0-60µs: before, while or just after
					// the others arrive.
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(60))*time.Microsecond)
				}
				arrived[k][r].Store(true)
				g, err := b.Await(ctx, r)
				cancel()
				if !assert.EqualValues(t, k, g, "rank %d drifted", r) {
					return
				}
				if err == nil {
					assert.True(t, allArrived(g), "rank %d passed generation %d before every rank arrived", r, g)
				}
				outcomes[k][r] = err
			}
		})
	}
	waitGroup(t, &wg, 2*time.Minute)

	completed, brokenGens := 0, 0
	for g := range gens {
		first := outcomes[g][0]
		for r := 1; r < parties; r++ {
			require.True(t, first == outcomes[g][r], "generation %d: rank 0 got %v, rank %d got %v", g, first, r, outcomes[g][r])
		}
		if first == nil {
			completed++
			require.EqualValues(t, 1, actions[g].Load(), "generation %d completed but its action ran %d times", g, actions[g].Load())
			continue
		}
		brokenGens++
		var be *barrier.BrokenError
		require.ErrorAs(t, first, &be)
		require.EqualValues(t, g, be.Generation)
		require.NotEmpty(t, be.Arrived, "generation %d broken with nobody in it", g)
		require.Contains(t, be.Arrived, be.BrokenBy, "generation %d broken by a rank not in it", g)
		require.ErrorIs(t, be, context.DeadlineExceeded)
		require.NotContains(t, be.Cause.Error(), "timed out", "the barrier's own timeout fired: a wait hung")
		all := append(slices.Clone(be.Arrived), be.Missing...)
		slices.Sort(all)
		require.Equal(t, []int{0, 1, 2, 3}, all)
		require.LessOrEqual(t, actions[g].Load(), int32(1))
	}
	t.Logf("%d generations: %d completed, %d broken", gens, completed, brokenGens)
	require.Positive(t, completed)
	require.Positive(t, brokenGens, "no generation broke: the test exercised nothing")
}
