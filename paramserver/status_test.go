package paramserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/paramserver"
)

func TestStatusShowsReadLagAndWatchers(t *testing.T) {
	defer goleak.VerifyNone(t)
	initial := paramserver.Params{"w": fill(4, 0)}
	s := newServer(t, initial, paramserver.WithWorkers(2), paramserver.WithMaxStaleness(8))
	grad := like(initial, 1)
	s.Get(1)
	advance(t, s, 3, grad)
	s.Get(0)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.WaitVersion(ctx, 4)
		done <- err
	}()
	require.Eventually(t, func() bool { return s.Status().Watchers == 1 }, 10*time.Second, time.Millisecond)
	st := s.Status()
	assert.Equal(t, s.String(), st.Name)
	assert.Equal(t, uint64(3), st.Version)
	assert.Equal(t, uint64(8), st.MaxStaleness)
	assert.Equal(t, []uint64{0, 3}, st.ReadLag, "worker 1 read version 0")
	assert.Equal(t, uint64(3), st.Total().Accepted)

	advance(t, s, 4, grad)
	require.NoError(t, <-done)
	assert.Zero(t, s.Status().Watchers)
}
