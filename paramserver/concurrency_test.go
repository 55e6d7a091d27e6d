package paramserver_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

const workers = 64

// uniform reports whether every element of p equals x.
func uniform(p paramserver.Params, x float32) bool {
	for _, v := range p {
		for _, y := range v {
			if y != x {
				return false
			}
		}
	}
	return true
}

// TestGetIsNeverTorn: 64 workers apply dense gradients that add 1 to every
// element, so a consistent snapshot of version v has every element equal
// to v. Readers check every snapshot while the updates run, and check
// again at the end that no snapshot they kept was modified.
func TestGetIsNeverTorn(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	const applies, readers = 60, 4
	initial := paramserver.Params{"a": fill(8, 0), "b": fill(3, 0), "c": fill(5, 0), "d": fill(2, 0)}
	s := newServer(t, initial, paramserver.WithWorkers(workers+readers),
		paramserver.WithMaxStaleness(math.MaxUint64), paramserver.WithLearningRate(1))
	grad := like(initial, -1)
	ctx := context.Background()

	var writers, rs sync.WaitGroup
	var done atomic.Bool
	kept := make([][]paramserver.Snapshot, readers)
	for r := range readers {
		rs.Go(func() {
			for i := 0; !done.Load(); i++ {
				snap := s.Get(workers + r)
				assert.True(t, uniform(snap.Params, float32(snap.Version)), "torn snapshot at version %d: %v", snap.Version, snap.Params)
				if i%50 == 0 {
					kept[r] = append(kept[r], snap)
				}
				runtime.Gosched()
			}
		})
	}
	for w := range workers {
		writers.Go(func() {
			for range applies {
				snap := s.Get(w)
				assert.True(t, uniform(snap.Params, float32(snap.Version)))
				_, err := s.Apply(ctx, w, grad, snap.Version)
				assert.NoError(t, err)
			}
		})
	}
	writers.Wait()
	done.Store(true)
	rs.Wait()

	final := s.Get(0)
	assert.Equal(t, uint64(workers*applies), final.Version, "each accepted Apply adds exactly 1")
	assert.True(t, uniform(final.Params, workers*applies))
	n := 0
	for _, snaps := range kept {
		for _, snap := range snaps {
			assert.True(t, uniform(snap.Params, float32(snap.Version)), "snapshot %d was modified after it was returned", snap.Version)
			n++
		}
	}
	assert.NotZero(t, n)
}

// TestSparseUpdatesAreAtomic: gradients touching one of two keys (two
// shards) run concurrently; a[0] counts the updates of a, b[0] those of b,
// so a consistent snapshot has a[0]+b[0] equal to its version.
func TestSparseUpdatesAreAtomic(t *testing.T) {
	defer lockordertest.VerifyNone(t) // the two shard locks never form a cycle
	const applies = 50
	s := newServer(t, paramserver.Params{"a": {0, 0}, "b": {0}}, paramserver.WithWorkers(workers+1),
		paramserver.WithMaxStaleness(math.MaxUint64), paramserver.WithLearningRate(1))
	require.Equal(t, 2, paramserver.Shards(s))
	ctx := context.Background()
	var wg, reader sync.WaitGroup
	var done atomic.Bool
	reader.Go(func() {
		for !done.Load() {
			snap := s.Get(workers)
			p := snap.Params
			assert.Equal(t, float32(snap.Version), p["a"][0]+p["b"][0], "snapshot %d: %v", snap.Version, p)
			assert.Equal(t, p["a"][0], p["a"][1])
			runtime.Gosched()
		}
	})
	for w := range workers {
		wg.Go(func() {
			for i := range applies {
				grad := paramserver.Params{"a": {-1, -1}}
				if (w+i)%2 == 0 {
					grad = paramserver.Params{"b": {-1}}
				} else if i%7 == 0 {
					grad = paramserver.Params{"a": {-0.5, -0.5}, "b": {-0.5}}
				}
				_, err := s.Apply(ctx, w, grad, s.Get(w).Version)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	done.Store(true)
	reader.Wait()
	snap := s.Get(0)
	assert.Equal(t, uint64(workers*applies), snap.Version)
	assert.Equal(t, float32(snap.Version), snap.Params["a"][0]+snap.Params["b"][0])
}

// grad returns worker w's i-th gradient, known in advance: small integers,
// sometimes dense, sometimes on one key, so that sums are exact in float32.
func gradOf(w, i int) paramserver.Params {
	val := func(j int) float32 { return float32((w*7+i*3+j)%5 - 2) }
	vec := func(n int) []float32 {
		out := make([]float32, n)
		for j := range out {
			out[j] = val(j)
		}
		return out
	}
	switch (w + i) % 5 {
	case 0:
		return paramserver.Params{"a": vec(4), "b": vec(3), "c": vec(2), "d": vec(5)}
	case 1:
		return paramserver.Params{"a": vec(4)}
	case 2:
		return paramserver.Params{"b": vec(3), "c": vec(2)}
	case 3:
		return paramserver.Params{"d": vec(5)}
	}
	return paramserver.Params{"c": vec(2), "a": vec(4)}
}

// TestNothingLost: 64 workers submit 1000 known gradients each, some
// deliberately too stale or of the wrong shape. Afterwards the parameters are the initial ones
// minus lr times the sum of exactly the accepted gradients, accepted plus
// rejected is what was submitted, the version is the number accepted, and
// the statistics agree with what each worker saw.
func TestNothingLost(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	const applies, bound, lr = 1000, 2, 0.5
	initial := paramserver.Params{"a": fill(4, 1), "b": fill(3, 2), "c": fill(2, 3), "d": fill(5, 4)}
	s := newServer(t, initial, paramserver.WithWorkers(workers), paramserver.WithMaxStaleness(bound), paramserver.WithLearningRate(lr))
	ctx := context.Background()

	type tally struct {
		accepted, rejected, shape uint64
		sum                       paramserver.Params
	}
	tallies := make([]tally, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			tl := &tallies[w]
			tl.sum = like(initial, 0)
			for i := range applies {
				snap := s.Get(w)
				base := snap.Version
				if i%50 == 49 && base > bound {
					base -= bound + 1 // too stale whatever happens meanwhile
				}
				if i%97 == 0 {
					_, err := s.Apply(ctx, w, paramserver.Params{"a": {1}}, base)
					assert.ErrorIs(t, err, paramserver.ErrShape)
					tl.shape++
					continue
				}
				g := gradOf(w, i)
				v, err := s.Apply(ctx, w, g, base)
				if err != nil {
					assert.ErrorIs(t, err, staleness.ErrTooStale)
					var se *staleness.StaleError
					if assert.True(t, errors.As(err, &se)) {
						assert.Greater(t, se.Staleness, uint64(bound))
					}
					tl.rejected++
					continue
				}
				assert.Greater(t, v, snap.Version)
				// v-1 is the version it was applied at: the bound held then.
				assert.LessOrEqual(t, v-1-base, uint64(bound), "applied at staleness %d", v-1-base)
				tl.accepted++
				for k, x := range g {
					for j := range x {
						tl.sum[k][j] += x[j]
					}
				}
			}
		})
	}
	wg.Wait()

	var accepted, rejected uint64
	want := initial.Clone()
	st := s.Stats()
	for w, tl := range tallies {
		accepted += tl.accepted
		rejected += tl.rejected
		for k, x := range tl.sum {
			for j := range x {
				want[k][j] -= lr * x[j]
			}
		}
		ws := st.Workers[w]
		assert.Equal(t, tl.accepted, ws.Accepted, "worker %d", w)
		assert.Equal(t, tl.rejected, ws.TooStale, "worker %d", w)
		assert.Equal(t, tl.shape, ws.BadShape, "worker %d", w)
		assert.Zero(t, ws.FutureVersion)
		rejected += tl.shape
		assert.Equal(t, uint64(applies), ws.Submitted())
	}
	assert.Equal(t, uint64(workers*applies), accepted+rejected)
	assert.GreaterOrEqual(t, rejected, uint64(workers*(applies/50-1+applies/97)), "the deliberate rejections")
	final := s.Get(0)
	assert.Equal(t, accepted, final.Version, "the version counts the accepted gradients")
	for k, x := range want {
		assert.InDeltaSlice(t, x, final.Params[k], 1e-3, "parameter %s", k)
	}
	total := st.Total()
	var hist uint64
	for _, n := range total.Staleness {
		hist += n
	}
	assert.Equal(t, total.Accepted+total.TooStale, hist, "every checked gradient is in the histogram")
	assert.Equal(t, total.TooStale, total.Staleness[bound+1], "the overflow bucket holds the rejected")
}

// TestReadsAreMonotonic: while 64 workers update, each worker's Gets never
// go backwards, and no version-regression is reported.
func TestReadsAreMonotonic(t *testing.T) {
	defer lockordertest.VerifyNone(t) // includes version-regression
	const applies = 40
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithWorkers(workers), paramserver.WithMaxStaleness(math.MaxUint64))
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var last uint64
			for range applies {
				for range 5 {
					v := s.Get(w).Version
					assert.GreaterOrEqual(t, v, last, "worker %d read %d after %d", w, v, last)
					last = v
				}
				_, err := s.Apply(ctx, w, paramserver.Params{"w": {1}}, last)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
}
