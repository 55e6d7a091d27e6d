package paramserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

func TestApplyDefaultStep(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {1, 2, 3}, "b": {10}}, paramserver.WithLearningRate(0.5))
	before := s.Get(0)
	v, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {2, 2, 2}, "b": {4}}, 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), v)
	after := s.Get(0)
	assert.Equal(t, uint64(1), after.Version)
	assert.Equal(t, paramserver.Params{"w": {0, 1, 2}, "b": {8}}, after.Params)
	assert.Equal(t, paramserver.Params{"w": {1, 2, 3}, "b": {10}}, before.Params, "an old snapshot never changes")
}

func TestApplySparseGradientUpdatesOnlyItsKeys(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"a": {1, 1}, "b": {1}, "c": {1, 1, 1}}, paramserver.WithLearningRate(1))
	_, err := s.Apply(context.Background(), 0, paramserver.Params{"b": {-5}}, 0)
	require.NoError(t, err)
	assert.Equal(t, paramserver.Params{"a": {1, 1}, "b": {6}, "c": {1, 1, 1}}, s.Get(0).Params)
}

// TestApplyStalenessBoundaries checks staleness s-1, s and s+1 against a
// bound s, at the server's apply time: s-1 and s are applied, s+1 is
// rejected and changes nothing.
func TestApplyStalenessBoundaries(t *testing.T) {
	defer lockordertest.VerifyNone(t) // stale rejections are expected
	const current = 20
	for _, bound := range []uint64{0, 1, 3, 10} {
		for _, d := range []uint64{bound - 1, bound, bound + 1} {
			if d > bound+1 { // bound-1 wrapped for bound 0
				continue
			}
			t.Run(fmt.Sprintf("bound %d staleness %d", bound, d), func(t *testing.T) {
				s := newServer(t, paramserver.Params{"w": {0, 0}}, paramserver.WithMaxStaleness(bound), paramserver.WithLearningRate(1))
				advance(t, s, current, paramserver.Params{"w": {-1, -1}})
				before := s.Get(0)
				v, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {-100, -100}}, current-d)
				if d <= bound {
					require.NoError(t, err)
					assert.Equal(t, uint64(current+1), v)
					assert.Equal(t, []float32{120, 120}, s.Get(0).Params["w"])
					return
				}
				require.ErrorIs(t, err, staleness.ErrTooStale)
				var se *staleness.StaleError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, staleness.StaleError{Current: current, Base: current - d, Staleness: d, Max: bound}, *se)
				assert.Zero(t, v)
				assert.Equal(t, before, s.Get(0), "a rejected gradient changes nothing")
				assert.Equal(t, uint64(1), s.Stats().Workers[0].TooStale)
			})
		}
	}
}

// TestIncidentStaleness replays the incident's figures through a server
// with bound 10: the gradients 15, 12 and 18 versions old that were
// applied despite the warnings are rejected; 10 is applied; and 11, which
// the incident's off-by-one let through, is rejected.
func TestIncidentStaleness(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(10), paramserver.WithWorkers(32))
	advance(t, s, 142, paramserver.Params{"w": {1}})
	ctx := context.Background()
	for _, tc := range []struct {
		worker    int
		staleness uint64
	}{{23, 15}, {17, 12}, {9, 18}, {5, 11}} {
		before := s.Get(tc.worker)
		_, err := s.Apply(ctx, tc.worker, paramserver.Params{"w": {1}}, s.Version()-tc.staleness)
		var se *staleness.StaleError
		require.ErrorAs(t, err, &se, "worker %d staleness %d", tc.worker, tc.staleness)
		assert.Equal(t, tc.staleness, se.Staleness)
		assert.Equal(t, before, s.Get(tc.worker))
	}
	v, err := s.Apply(ctx, 3, paramserver.Params{"w": {1}}, s.Version()-10)
	require.NoError(t, err, "staleness 10 is within the bound")
	assert.Equal(t, uint64(143), v)
	st := s.Stats()
	assert.Equal(t, uint64(4), st.Total().TooStale)
	assert.Equal(t, uint64(1), st.Workers[23].TooStale)
}

func TestApplyFutureVersion(t *testing.T) {
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(100))
	advance(t, s, 3, paramserver.Params{"w": {1}})
	before := s.Get(0)
	_, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {1}}, 4)
	require.ErrorIs(t, err, staleness.ErrFutureVersion)
	var se *staleness.StaleError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, staleness.StaleError{Current: 3, Base: 4, Max: 100}, *se)
	assert.Equal(t, before, s.Get(0))
	assert.Equal(t, uint64(1), s.Stats().Workers[0].FutureVersion)
	consume(t, paramserver.KindFutureRejected) // a bug report: see report_test.go
}

func TestApplyShapeMismatch(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {1, 2, 3}, "b": {4}})
	ctx := context.Background()
	before := s.Get(0)
	for _, tc := range []struct {
		name string
		grad paramserver.Params
		want paramserver.ShapeError
		msg  string
	}{
		{"nil", nil, paramserver.ShapeError{Reason: paramserver.ShapeEmpty}, "paramserver: empty gradient"},
		{"empty", paramserver.Params{}, paramserver.ShapeError{Reason: paramserver.ShapeEmpty}, "paramserver: empty gradient"},
		{"unknown key", paramserver.Params{"w": {1, 1, 1}, "x": {1}},
			paramserver.ShapeError{Reason: paramserver.ShapeUnknownKey, Key: "x", Want: -1, Got: 1},
			`paramserver: gradient key "x" is not a parameter`},
		{"short", paramserver.Params{"w": {1, 1}},
			paramserver.ShapeError{Reason: paramserver.ShapeLength, Key: "w", Want: 3, Got: 2},
			`paramserver: gradient "w" has 2 elements, the parameter 3`},
		{"long", paramserver.Params{"b": {1, 1}},
			paramserver.ShapeError{Reason: paramserver.ShapeLength, Key: "b", Want: 1, Got: 2},
			`paramserver: gradient "b" has 2 elements, the parameter 1`},
		{"several: the smallest key is named", paramserver.Params{"z": {1}, "w": {1}, "b": {1, 2}, "y": nil},
			paramserver.ShapeError{Reason: paramserver.ShapeLength, Key: "b", Want: 1, Got: 2},
			`paramserver: gradient "b" has 2 elements, the parameter 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := s.Apply(ctx, 0, tc.grad, 0)
			assert.Zero(t, v)
			require.ErrorIs(t, err, paramserver.ErrShape)
			var se *paramserver.ShapeError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.want, *se)
			assert.EqualError(t, err, tc.msg)
		})
	}
	assert.Equal(t, before, s.Get(0), "nothing changed")
	assert.Equal(t, uint64(6), s.Stats().Workers[0].BadShape)
}

func TestApplyWithDoneContextDoesNothing(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {1}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Apply(ctx, 0, paramserver.Params{"w": {1}}, 0)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, uint64(0), s.Version())
	assert.Zero(t, s.Stats().Total().Submitted())
}
