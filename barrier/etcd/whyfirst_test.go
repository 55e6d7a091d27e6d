package etcd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/barrier"
	etcdbarrier "github.com/syncwatch/syncwatch/barrier/etcd"
	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
)

// waitBlocked waits until goroutine gid is blocked, as the runtime shows it
// (in every mode: ModeOff registers no lock wait).
func waitBlocked(t *testing.T, gid int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		r, ok := waitfor.Fresh().Routine(gid)
		return ok && waitfor.StateBlocked(r.State)
	}, 20*time.Second, time.Millisecond)
}

// Generation 0: rank 0 waits holding aggregation_lock; rank 1, joined by
// the same process, never calls Await, and a goroutine of that process
// is blocked on the lock. The answer of rank 1's process names that
// goroutine, the lock and rank 0, without claiming it is rank 1's.
func TestWhyFirstGenerationNamesGoroutineBlockedOnLockHeldAtBarrier(t *testing.T) {
	if lockorder.CurrentMode() != lockorder.ModeCheck {
		t.Skip("needs lockorder ModeCheck to know lock holders")
	}
	p := prefix(t)
	const timeout = 4 * time.Second // time for rank 1's process to answer, even on a busy machine
	b := etcdbarrier.NewBarrier(client(t, server), p, 2, etcdbarrier.WithName("allreduce"), etcdbarrier.WithTimeout(timeout))
	require.NoError(t, b.Join(t.Context(), 0))
	require.NoError(t, b.Join(t.Context(), 1))

	agg := lockorder.NewMutex("aggregation_lock")
	locked, arrive := make(chan struct{}), make(chan struct{})
	rank0 := make(chan error, 1)
	go func() {
		agg.Lock()
		close(locked)
		<-arrive
		_, err := b.Await(context.Background(), 0)
		agg.Unlock()
		rank0 <- err
	}()
	<-locked
	gids, late := make(chan int64, 1), make(chan error, 1)
	go func() { // blocked on the lock; rank 1 once it gets it, late
		gids <- barrier.Goroutine()
		agg.Lock()
		agg.Unlock() //nolint:staticcheck // the wait is the point
		_, err := b.Await(context.Background(), 1)
		late <- err
	}()
	blocked := <-gids
	waitBlocked(t, blocked)
	close(arrive)

	be := brokenOf(t, <-rank0)
	t.Log(be.Error())
	assert.Error(t, <-late)
	require.Equal(t, []int{1}, be.Missing)
	require.Len(t, be.Why, 1)
	why := be.Why[0]
	assert.Contains(t, why.Reason, fmt.Sprintf(", never arrived; goroutine %d, of no known rank, is blocked on lock aggregation_lock#", blocked))
	assert.True(t, strings.HasSuffix(why.Reason, " (rank 0), which is waiting at this barrier"), why.Reason)
	assert.NotEqual(t, blocked, why.Goroutine, "the goroutine explained as rank 1's is its joiner's")
	require.NoError(t, b.Close())
	requireClean(t, client(t, server), p)
}
