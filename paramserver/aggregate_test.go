package paramserver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

func TestAggregationAveragesKGradients(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {10, 10}, "b": {1}},
		paramserver.WithAggregation(4), paramserver.WithWorkers(4), paramserver.WithLearningRate(1))
	ctx := context.Background()
	grads := []paramserver.Params{
		{"w": {1, 2}, "b": {4}},
		{"w": {3, 2}},
		{"w": {1, 2}, "b": {4}},
		{"w": {3, 6}},
	}
	for w, g := range grads[:3] {
		v, err := s.Apply(ctx, w, g, 0)
		require.NoError(t, err)
		assert.Equal(t, uint64(1), v, "the version that will include it")
		assert.Equal(t, uint64(0), s.Version(), "nothing is applied before the round completes")
		assert.Equal(t, w+1, s.Stats().Pending)
	}
	v, err := s.Apply(ctx, 3, grads[3], 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), v)
	snap := s.Get(0)
	assert.Equal(t, uint64(1), snap.Version, "k gradients make one version")
	// Averages: w = (8, 12)/4 = (2, 3); b = 8/4 = 2 (missing counts as 0).
	assert.Equal(t, paramserver.Params{"w": {8, 7}, "b": {-1}}, snap.Params)
	st := s.Stats()
	assert.Zero(t, st.Pending)
	assert.Equal(t, uint64(4), st.Total().Accepted)
}

func TestAggregationRejectsStaleAndCountsThem(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithAggregation(2), paramserver.WithWorkers(3), paramserver.WithLearningRate(1))
	ctx := context.Background()
	for w := range 2 {
		_, err := s.Apply(ctx, w, paramserver.Params{"w": {-1}}, 0)
		require.NoError(t, err)
	}
	require.Equal(t, uint64(1), s.Version())

	// Worker 2 computed on version 0 too, but arrives after the round.
	_, err := s.Apply(ctx, 2, paramserver.Params{"w": {-100}}, 0)
	require.ErrorIs(t, err, staleness.ErrTooStale)
	var se *staleness.StaleError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, staleness.StaleError{Current: 1, Base: 0, Staleness: 1, Max: 0}, *se)
	st := s.Stats()
	assert.Equal(t, uint64(1), st.Workers[2].TooStale, "dropped, and counted")
	assert.Zero(t, st.Pending, "not part of the next round")

	_, err = s.Apply(ctx, 2, paramserver.Params{"w": {-3}}, 1)
	require.NoError(t, err)
	_, err = s.Apply(ctx, 0, paramserver.Params{"w": {-5}}, 1)
	require.NoError(t, err)
	assert.Equal(t, paramserver.Params{"w": {5}}, s.Get(0).Params, "1 + (3+5)/2: the stale -100 is nowhere")
}

// TestAggregationSynchronousWorkers runs k workers the SyncReplicas way:
// each submits on the current version and waits for the round.
func TestAggregationSynchronousWorkers(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	const k, rounds = 4, 25
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithAggregation(k), paramserver.WithWorkers(k), paramserver.WithLearningRate(1))
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range k {
		wg.Go(func() {
			for r := range rounds {
				snap := s.Get(w)
				assert.Equal(t, uint64(r), snap.Version)
				v, err := s.Apply(ctx, w, paramserver.Params{"w": {-float32(w + 1)}}, snap.Version)
				if !assert.NoError(t, err) {
					return
				}
				_, err = s.WaitVersion(ctx, v)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	snap := s.Get(0)
	assert.Equal(t, uint64(rounds), snap.Version)
	assert.InDelta(t, rounds*(1+2+3+4)/4.0, snap.Params["w"][0], 1e-4)
}

// TestAggregationNothingLost: 64 workers submit without waiting; every
// round holds exactly k gradients on its version, and the parameters are
// the initial ones minus the sum of the rounds' averages.
func TestAggregationNothingLost(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	const k, applies, lr = 8, 50, 0.5
	initial := paramserver.Params{"a": fill(4, 1), "b": fill(3, 2), "c": fill(2, 3), "d": fill(5, 4)}
	s := newServer(t, initial, paramserver.WithAggregation(k), paramserver.WithWorkers(workers), paramserver.WithLearningRate(lr))
	ctx := context.Background()

	type contribution struct {
		version uint64
		grad    paramserver.Params
	}
	var mu sync.Mutex
	var accepted []contribution
	var rejected int
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range applies {
				g := gradOf(w, i)
				v, err := s.Apply(ctx, w, g, s.Get(w).Version)
				mu.Lock()
				if err == nil {
					accepted = append(accepted, contribution{v, g})
				} else {
					assert.ErrorIs(t, err, staleness.ErrTooStale)
					rejected++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fillers := 0
	// Complete the last round, if any.
	for p := s.Stats().Pending; p > 0 && p < k; p++ {
		fillers++
		g := gradOf(0, p)
		v, err := s.Apply(ctx, 0, g, s.Version())
		require.NoError(t, err)
		accepted = append(accepted, contribution{v, g})
	}
	final := s.Get(0)
	require.Zero(t, s.Stats().Pending)

	perVersion := map[uint64]int{}
	want := initial.Clone()
	for _, c := range accepted {
		perVersion[c.version]++
		for key, x := range c.grad {
			for j := range x {
				want[key][j] -= lr * x[j] / k
			}
		}
	}
	assert.Len(t, perVersion, int(final.Version), "every version is one round")
	for v, n := range perVersion {
		assert.Equal(t, k, n, "round %d", v)
	}
	for key, x := range want {
		assert.InDeltaSlice(t, x, final.Params[key], 1e-3, "parameter %s", key)
	}
	total := s.Stats().Total()
	assert.Equal(t, uint64(len(accepted)), total.Accepted)
	assert.Equal(t, uint64(rejected), total.TooStale)
	assert.Equal(t, uint64(workers*applies+fillers), total.Submitted(), "accepted + rejected = submitted")
	assert.Equal(t, workers*applies+fillers, len(accepted)+rejected)
}

func TestAggregationRoundWaitsAreBounded(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithAggregation(3), paramserver.WithMaxWait(20*time.Millisecond))
	v, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {1}}, 0)
	require.NoError(t, err)
	_, err = s.WaitVersion(context.Background(), v)
	assert.ErrorIs(t, err, paramserver.ErrWaitTimeout, "a round missing gradients does not hang its waiters")
	assert.Equal(t, 1, s.Stats().Pending)
}
