package barrier_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
)

func TestStatusShowsArrivedAndMissingRanks(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(3, barrier.WithName("status"))
	s := b.Status()
	assert.Equal(t, "status", s.Name)
	assert.Equal(t, 3, s.Parties)
	assert.Zero(t, s.Generation)
	assert.Empty(t, s.Arrived)
	assert.Empty(t, s.Missing, "nobody waits: nobody is missing")
	assert.Nil(t, s.Last)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.Await(ctx, 1)
		done <- err
	}()
	waitArrived(t, b, 0, 1)
	s = b.Status()
	assert.Equal(t, []int{1}, s.Arrived)
	assert.Equal(t, 2, s.MissingCount)
	require.Len(t, s.Missing, 2)
	assert.Equal(t, 0, s.Missing[0].Rank)
	assert.Equal(t, "never arrived at this barrier", s.Missing[0].Reason)
	assert.Equal(t, 2, s.Missing[1].Rank)
	assert.GreaterOrEqual(t, s.Waiting, time.Duration(0))

	res := awaitAll(t, b, []int{0, 2}, 10*time.Second)
	require.NoError(t, <-done)
	require.NoError(t, res[0].err)
	s = b.Status()
	assert.Equal(t, uint64(1), s.Generation)
	assert.Empty(t, s.Missing)
	require.NotNil(t, s.Last)
	assert.Equal(t, uint64(0), s.Last.Generation)
	assert.False(t, s.Last.Broken)
}
