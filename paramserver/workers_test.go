package paramserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
)

// Without WithWorkers, any worker number below MaxUndeclaredWorkers is
// accepted, and tracked from its first call.
func TestUndeclaredWorkersAreTrackedOnFirstCall(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(1))
	assert.Empty(t, s.Stats().Workers, "no worker called yet")

	ctx := context.Background()
	assert.Equal(t, uint64(0), s.Get(5).Version)
	v, err := s.Apply(ctx, 7, paramserver.Params{"w": {1}}, 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), v)
	_, err = s.Apply(ctx, 3, paramserver.Params{"w": {1, 2}}, 1)
	require.ErrorIs(t, err, paramserver.ErrShape)

	st := s.Stats()
	require.Len(t, st.Workers, 8, "up to the highest worker that called")
	for w, ws := range st.Workers {
		want := paramserver.WorkerStats{Staleness: []uint64{0, 0, 0}}
		switch w {
		case 7:
			want = paramserver.WorkerStats{Accepted: 1, Staleness: []uint64{1, 0, 0}}
		case 3:
			want.BadShape = 1
		}
		assert.Equal(t, want, ws, "worker %d", w)
	}
	assert.Equal(t, uint64(2), st.Total().Submitted())

	last := paramserver.MaxUndeclaredWorkers - 1
	assert.Equal(t, uint64(1), s.Get(last).Version)
	assert.Len(t, s.Stats().Workers, paramserver.MaxUndeclaredWorkers)

	for _, w := range []int{-1, paramserver.MaxUndeclaredWorkers} {
		msg := fmt.Sprintf("paramserver: worker %d out of range [0, %d): declare workers with WithWorkers", w, paramserver.MaxUndeclaredWorkers)
		assert.PanicsWithValue(t, msg, func() { s.Get(w) })
		assert.PanicsWithValue(t, msg, func() { _, _ = s.Apply(ctx, w, paramserver.Params{"w": {1}}, 1) })
	}
}

// Undeclared workers calling for the first time at once each get one
// state: every gradient is counted once, for its worker.
func TestUndeclaredWorkersFirstCallsRace(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	const workers, applies = 64, 20
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(1<<20))
	var wg sync.WaitGroup
	for g := range 2 * workers {
		w := (g * 37) % workers // two goroutines per worker, workers in scrambled order
		wg.Go(func() {
			for range applies {
				snap := s.Get(w)
				_, err := s.Apply(context.Background(), w, paramserver.Params{"w": {1}}, snap.Version)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	require.Len(t, st.Workers, workers)
	for w, ws := range st.Workers {
		assert.Equal(t, uint64(2*applies), ws.Accepted, "worker %d", w)
	}
	assert.Equal(t, uint64(2*workers*applies), st.Version)
}
