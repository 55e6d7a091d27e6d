package paramserver_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/paramserver"
)

func TestStatsHistogramAndReasons(t *testing.T) {
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(3), paramserver.WithWorkers(2))
	grad := paramserver.Params{"w": {1}}
	advance(t, s, 20, grad) // worker 0: 20 accepted at staleness 0
	ctx := context.Background()
	for _, d := range []uint64{0, 1, 2, 3, 3, 4, 7, 12} {
		_, _ = s.Apply(ctx, 1, grad, s.Version()-d)
	}
	_, _ = s.Apply(ctx, 1, grad, s.Version()+1)
	_, _ = s.Apply(ctx, 1, paramserver.Params{"x": {1}}, 0)
	consume(t, paramserver.KindFutureRejected)

	st := s.Stats()
	assert.Equal(t, uint64(25), st.Version)
	assert.Equal(t, uint64(3), st.MaxStaleness)
	require.Len(t, st.Workers, 2)
	assert.Equal(t, paramserver.WorkerStats{Accepted: 20, Staleness: []uint64{20, 0, 0, 0, 0}}, st.Workers[0])
	w1 := st.Workers[1]
	assert.Equal(t, paramserver.WorkerStats{
		Accepted: 5, TooStale: 3, FutureVersion: 1, BadShape: 1,
		Staleness: []uint64{1, 1, 1, 2, 3}, // 0..3, then the 3 rejected
	}, w1)
	assert.Equal(t, uint64(5), w1.Rejected())
	assert.Equal(t, uint64(10), w1.Submitted())
	assert.Equal(t, paramserver.WorkerStats{
		Accepted: 25, TooStale: 3, FutureVersion: 1, BadShape: 1,
		Staleness: []uint64{21, 1, 1, 2, 3},
	}, st.Total())
}

func TestStatsHistogramIsBounded(t *testing.T) {
	s := newServer(t, paramserver.Params{"w": {0}}, paramserver.WithMaxStaleness(1000))
	grad := paramserver.Params{"w": {1}}
	advance(t, s, 100, grad)
	_, err := s.Apply(context.Background(), 0, grad, 10) // staleness 90
	require.NoError(t, err)
	h := s.Stats().Workers[0].Staleness
	require.Len(t, h, 65, "64 exact buckets and one for the rest")
	assert.Equal(t, uint64(100), h[0])
	assert.Equal(t, uint64(1), h[64], "staleness past 63 lands in the last bucket")
}
