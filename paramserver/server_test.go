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

func TestNewCopiesInitial(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	initial := paramserver.Params{"w": {1, 2, 3}, "b": {4}}
	s := newServer(t, initial)
	initial["w"][0] = 100
	initial["x"] = []float32{1}
	snap := s.Get(0)
	assert.Equal(t, uint64(0), snap.Version)
	assert.Equal(t, paramserver.Params{"w": {1, 2, 3}, "b": {4}}, snap.Params)
	assert.Equal(t, uint64(0), s.Version())
	assert.Regexp(t, `^paramserver#\d+$`, s.String())
}

func TestNewRejectsEmptyOrRaggedInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		initial paramserver.Params
		key     string
		msg     string
	}{
		{"nil", nil, "", "paramserver: no initial parameters"},
		{"no keys", paramserver.Params{}, "", "paramserver: no initial parameters"},
		{"empty tensor", paramserver.Params{"a": {1}, "w": {}}, "w", `paramserver: initial parameter "w" has no elements`},
		{"nil tensor", paramserver.Params{"b": nil, "w": {1}}, "b", `paramserver: initial parameter "b" has no elements`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := paramserver.New(tc.initial)
			assert.Nil(t, s)
			require.ErrorIs(t, err, paramserver.ErrShape)
			var se *paramserver.ShapeError
			require.ErrorAs(t, err, &se)
			assert.True(t, se.Initial)
			assert.Equal(t, paramserver.ShapeEmpty, se.Reason)
			assert.Equal(t, tc.key, se.Key)
			assert.EqualError(t, err, tc.msg)
			assert.Equal(t, "shape-mismatch", se.ErrorType())
		})
	}
}

func TestOptionsPanic(t *testing.T) {
	for _, tc := range []struct {
		msg string
		f   func()
	}{
		{"paramserver: aggregation of 0 gradients", func() { paramserver.WithAggregation(0) }},
		{"paramserver: aggregation of -2 gradients", func() { paramserver.WithAggregation(-2) }},
		{"paramserver: history of 0 versions", func() { paramserver.WithHistory(0) }},
		{"paramserver: 0 workers", func() { paramserver.WithWorkers(0) }},
		{"paramserver: non-positive max wait", func() { paramserver.WithMaxWait(0) }},
		{"paramserver: nil update function", func() { paramserver.WithUpdate(nil) }},
		{"paramserver: learning rate NaN is not finite and positive", func() { paramserver.WithLearningRate(float32(math.NaN())) }},
		{"paramserver: learning rate +Inf is not finite and positive", func() { paramserver.WithLearningRate(float32(math.Inf(1))) }},
		{"paramserver: learning rate 0 is not finite and positive", func() { paramserver.WithLearningRate(0) }},
		{"paramserver: learning rate -0.1 is not finite and positive", func() { paramserver.WithLearningRate(-0.1) }},
		{"paramserver: WithLearningRate and WithUpdate both given: the update function owns the step", func() {
			_, _ = paramserver.New(paramserver.Params{"w": {1}},
				paramserver.WithUpdate(func(_, _ paramserver.Params) {}), paramserver.WithLearningRate(0.1))
		}},
		{"paramserver: WithAggregation(4) with WithMaxStaleness(2): aggregation takes only gradients on the current version", func() {
			_, _ = paramserver.New(paramserver.Params{"w": {1}}, paramserver.WithMaxStaleness(2), paramserver.WithAggregation(4))
		}},
	} {
		assert.PanicsWithValue(t, tc.msg, tc.f)
	}
}

func TestNilOptionsAndProvidersAreIgnored(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {1}}, nil,
		paramserver.WithTracerProvider(nil), paramserver.WithMeterProvider(nil), paramserver.WithMaxStaleness(0))
	v, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {1}}, 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), v)
	assert.InDelta(t, 1-paramserver.DefaultLearningRate, s.Get(0).Params["w"][0], 1e-7, "the default learning rate")
}

func TestWorkerOutOfRangeAndNilContextPanic(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {1}}, paramserver.WithWorkers(4))
	ctx := context.Background()
	grad := paramserver.Params{"w": {1}}
	for _, w := range []int{-1, 4} {
		msg := "paramserver: worker " + map[int]string{-1: "-1", 4: "4"}[w] + " out of range [0, 4): declare workers with WithWorkers"
		assert.PanicsWithValue(t, msg, func() { s.Get(w) })
		assert.PanicsWithValue(t, msg, func() { _, _ = s.Apply(ctx, w, grad, 0) })
	}
	var nilCtx context.Context
	assert.PanicsWithValue(t, "paramserver: Apply with nil Context", func() { _, _ = s.Apply(nilCtx, 0, grad, 0) })
	assert.PanicsWithValue(t, "paramserver: WaitVersion with nil Context", func() { _, _ = s.WaitVersion(nilCtx, 0) })
	assert.PanicsWithValue(t, "paramserver: Watch with nil Context", func() { s.Watch(nilCtx, 0) })
	assert.Equal(t, uint64(0), s.Version(), "nothing was applied")
	assert.Zero(t, s.Stats().Total().Submitted(), "nothing was counted")
}

func TestShardsAreBounded(t *testing.T) {
	one := newServer(t, paramserver.Params{"w": {1}})
	assert.Equal(t, 1, paramserver.Shards(one))
	many := make(paramserver.Params)
	for i := range 40 {
		many[string(rune('A'+i))] = []float32{1}
	}
	assert.Equal(t, 16, paramserver.Shards(newServer(t, many)))
}

func TestParamsClone(t *testing.T) {
	p := paramserver.Params{"w": {1, 2}}
	c := p.Clone()
	c["w"][0] = 9
	assert.Equal(t, float32(1), p["w"][0])
	assert.Nil(t, paramserver.Params(nil).Clone())
}
