package paramserver_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
)

func TestWithUpdate(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	var seen []int
	s := newServer(t, paramserver.Params{"w": {1, 2}, "b": {3}}, paramserver.WithUpdate(func(params, grad paramserver.Params) {
		seen = append(seen, len(params))
		for k, g := range grad {
			for i := range g {
				params[k][i] = params[k][i]*0.5 + g[i] // decay, then add
			}
		}
	}))
	old := s.Get(0)
	_, err := s.Apply(context.Background(), 0, paramserver.Params{"w": {10, 20}}, 0)
	require.NoError(t, err)
	assert.Equal(t, paramserver.Params{"w": {10.5, 21}, "b": {3}}, s.Get(0).Params)
	assert.Equal(t, []int{1}, seen, "the update sees only the keys of the gradient")
	assert.Equal(t, paramserver.Params{"w": {1, 2}, "b": {3}}, old.Params, "and works on copies")
}

// panicky fails on a gradient whose first element is 99.
func panicky(params, grad paramserver.Params) {
	for k, g := range grad {
		if g[0] == 99 {
			panic("update failed")
		}
		for i := range g {
			params[k][i] -= g[i]
		}
	}
}

func TestUpdatePanicPublishesNothing(t *testing.T) {
	defer lockordertest.VerifyNone(t) // no lock left held, no bad unlock
	s := newServer(t, paramserver.Params{"w": {5}, "b": {5}}, paramserver.WithUpdate(panicky), paramserver.WithMaxStaleness(3))
	ctx := context.Background()
	_, err := s.Apply(ctx, 0, paramserver.Params{"w": {1}}, 0)
	require.NoError(t, err)
	before := s.Get(0)

	assert.PanicsWithValue(t, "update failed", func() {
		_, _ = s.Apply(ctx, 0, paramserver.Params{"w": {99}, "b": {1}}, 1)
	})
	assert.Equal(t, before, s.Get(0), "nothing published")
	assert.Equal(t, uint64(1), s.Stats().Total().Accepted, "the failed Apply is not counted as accepted")

	// The locks were released: the server goes on.
	v, err := s.Apply(ctx, 0, paramserver.Params{"w": {1}, "b": {1}}, 1)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), v)
	assert.Equal(t, paramserver.Params{"w": {3}, "b": {4}}, s.Get(0).Params)
}

func TestUpdatePanicKeepsAggregationRound(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithUpdate(panicky), paramserver.WithAggregation(2))
	ctx := context.Background()
	_, err := s.Apply(ctx, 0, paramserver.Params{"w": {4}}, 0)
	require.NoError(t, err)
	// 4 + 194 averages to 99: the update panics on the completing gradient.
	assert.PanicsWithValue(t, "update failed", func() {
		_, _ = s.Apply(ctx, 0, paramserver.Params{"w": {194}}, 0)
	})
	assert.Equal(t, uint64(0), s.Version())
	assert.Equal(t, 1, s.Stats().Pending, "the round still holds the first gradient only")

	_, err = s.Apply(ctx, 0, paramserver.Params{"w": {2}}, 0)
	require.NoError(t, err)
	assert.Equal(t, paramserver.Params{"w": {-3}}, s.Get(0).Params, "(4+2)/2, the failed 194 is not in the round")
}

func TestUpdateMustKeepShape(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s := newServer(t, paramserver.Params{"w": {1, 2}}, paramserver.WithUpdate(func(params, _ paramserver.Params) {
		params["w"] = params["w"][:1]
	}))
	assert.PanicsWithValue(t, "paramserver: the WithUpdate function changed the keys or lengths of params", func() {
		_, _ = s.Apply(context.Background(), 0, paramserver.Params{"w": {1, 1}}, 0)
	})
	assert.Equal(t, paramserver.Params{"w": {1, 2}}, s.Get(0).Params)
}
