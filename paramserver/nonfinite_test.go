package paramserver_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
)

var (
	nan    = float32(math.NaN())
	posInf = float32(math.Inf(1))
	negInf = float32(math.Inf(-1))
)

// requireNonFinite checks that err is a *NonFiniteError with the given
// source, key, index and value (compared bit for bit, for NaN).
func requireNonFinite(t *testing.T, err error, source paramserver.NonFiniteSource, key string, index int, value float32) *paramserver.NonFiniteError {
	t.Helper()
	require.ErrorIs(t, err, paramserver.ErrNonFinite)
	var nf *paramserver.NonFiniteError
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, source, nf.Source)
	assert.Equal(t, key, nf.Key)
	assert.Equal(t, index, nf.Index)
	assert.Equal(t, math.Float32bits(value), math.Float32bits(nf.Value), "value %v, want %v", nf.Value, value)
	assert.Equal(t, "non-finite", nf.ErrorType())
	return nf
}

func TestNewRejectsNonFiniteInitialParameters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		initial paramserver.Params
		key     string
		index   int
		value   float32
		msg     string
	}{
		{"NaN", paramserver.Params{"w": {1, nan}}, "w", 1, nan, `paramserver: initial parameter "w"[1] is NaN`},
		{"+Inf", paramserver.Params{"w": {posInf}}, "w", 0, posInf, `paramserver: initial parameter "w"[0] is +Inf`},
		{"-Inf", paramserver.Params{"w": {0, 0, negInf}}, "w", 2, negInf, `paramserver: initial parameter "w"[2] is -Inf`},
		{"several: the smallest key, the first index", paramserver.Params{"z": {nan}, "b": {1, posInf, nan}, "c": {negInf}},
			"b", 1, posInf, `paramserver: initial parameter "b"[1] is +Inf`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := paramserver.New(tc.initial)
			assert.Nil(t, s)
			requireNonFinite(t, err, paramserver.NonFiniteInitial, tc.key, tc.index, tc.value)
			assert.EqualError(t, err, tc.msg)
		})
	}
}

func TestApplyRejectsNonFiniteGradient(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {1, 2, 3}, "b": {4}}, paramserver.WithMaxStaleness(2))
	advance(t, s, 2, paramserver.Params{"w": {1, 1, 1}})
	ctx := context.Background()
	before, stats := s.Get(0), s.Stats()
	for _, tc := range []struct {
		name  string
		grad  paramserver.Params
		key   string
		index int
		value float32
		msg   string
	}{
		{"NaN", paramserver.Params{"w": {0, nan, 0}}, "w", 1, nan, `paramserver: gradient "w"[1] is NaN`},
		{"+Inf", paramserver.Params{"b": {posInf}}, "b", 0, posInf, `paramserver: gradient "b"[0] is +Inf`},
		{"-Inf beside a finite key", paramserver.Params{"w": {negInf, 0, 0}, "b": {1}}, "w", 0, negInf,
			`paramserver: gradient "w"[0] is -Inf`},
		{"several: the smallest key, the first index", paramserver.Params{"w": {nan, nan, 0}, "b": {negInf}}, "b", 0, negInf,
			`paramserver: gradient "b"[0] is -Inf`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := s.Apply(ctx, 0, tc.grad, s.Version())
			assert.Zero(t, v)
			requireNonFinite(t, err, paramserver.NonFiniteGradient, tc.key, tc.index, tc.value)
			assert.EqualError(t, err, tc.msg)
		})
	}
	assert.Equal(t, before, s.Get(0), "nothing changed")
	after := s.Stats()
	assert.Equal(t, uint64(4), after.Workers[0].NonFinite)
	assert.Equal(t, uint64(4), after.Workers[0].Rejected())
	after.Workers[0].NonFinite = 0
	assert.Equal(t, stats, after, "nothing else was counted: no staleness, no acceptance")

	// A gradient that does not fit is a shape error first.
	_, err := s.Apply(ctx, 0, paramserver.Params{"x": {nan}}, s.Version())
	assert.ErrorIs(t, err, paramserver.ErrShape)
}

func TestApplyRejectsAnUpdateThatWouldBeNonFinite(t *testing.T) {
	t.Run("overflow", func(t *testing.T) {
		s := newServer(t, paramserver.Params{"w": {1, math.MaxFloat32}}, paramserver.WithLearningRate(1))
		before := s.Get(0)
		_, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {1, -math.MaxFloat32}}, 0)
		requireNonFinite(t, err, paramserver.NonFiniteUpdate, "w", 1, posInf)
		assert.EqualError(t, err, `paramserver: the update would make "w"[1] +Inf`)
		assert.Equal(t, before, s.Get(0), "nothing changed")
		assert.Equal(t, uint64(1), s.Stats().Workers[0].NonFinite)
	})
	t.Run("update function", func(t *testing.T) {
		s := newServer(t, paramserver.Params{"w": {1, 2}}, paramserver.WithUpdate(func(params, grad paramserver.Params) {
			for k, g := range grad {
				for i := range g {
					params[k][i] /= g[i] // an infinity where g[i] is 0
				}
			}
		}))
		_, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {1, 0}}, 0)
		requireNonFinite(t, err, paramserver.NonFiniteUpdate, "w", 1, posInf)
		assert.Equal(t, uint64(0), s.Version(), "nothing published")
		v, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {2, 2}}, 0)
		require.NoError(t, err)
		assert.Equal(t, uint64(1), v)
		assert.Equal(t, []float32{0.5, 1}, s.Get(0).Params["w"])
	})
}

func TestAggregationRejectsNonFiniteAndKeepsTheRound(t *testing.T) {
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithAggregation(3), paramserver.WithLearningRate(1))
	ctx := context.Background()
	apply := func(x float32) error {
		_, err := s.Apply(ctx, 0, paramserver.Params{"w": {x}}, 0)
		return err
	}
	require.NoError(t, apply(3e38))
	requireNonFinite(t, apply(nan), paramserver.NonFiniteGradient, "w", 0, nan)
	// The round's sum would overflow.
	requireNonFinite(t, apply(1e38), paramserver.NonFiniteUpdate, "w", 0, posInf)
	assert.Equal(t, 1, s.Stats().Pending, "the rejected gradients are not in the round")

	require.NoError(t, apply(0))
	// The completing gradient would make the round's sum overflow.
	requireNonFinite(t, apply(1e38), paramserver.NonFiniteUpdate, "w", 0, posInf)
	assert.Equal(t, 2, s.Stats().Pending, "the round is as it was")
	assert.Equal(t, uint64(0), s.Version())

	require.NoError(t, apply(-2.7e38))
	assert.Equal(t, uint64(1), s.Version())
	assert.InEpsilon(t, -1e37, s.Get(0).Params["w"][0], 1e-3, "-(3e38 + 0 - 2.7e38) / 3, at rate 1")
	st := s.Stats().Workers[0]
	assert.Equal(t, uint64(3), st.NonFinite)
	assert.Equal(t, uint64(3), st.Accepted)
}
