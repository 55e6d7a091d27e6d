package etcd_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/barrier"
	etcdbarrier "github.com/syncwatch/syncwatch/barrier/etcd"
	"github.com/syncwatch/syncwatch/lockorder"
)

// The incident across processes: ranks 2 and 3 share a process; rank 3
// takes aggregation_lock and waits at the barrier, rank 2 blocks on the
// lock. Ranks 0 and 1, in processes of their own, are told at the break
// what rank 2 is doing, from rank 2's process.
func TestWhyNamesTheLockAndItsHolderFromAnotherProcess(t *testing.T) {
	if lockorder.CurrentMode() != lockorder.ModeCheck {
		t.Skip("needs lockorder ModeCheck to know lock holders")
	}
	p := prefix(t)
	const timeout = 4 * time.Second // time for rank 2's process to answer, even on a busy machine
	opts := []etcdbarrier.Option{etcdbarrier.WithName("allreduce"), etcdbarrier.WithTimeout(timeout)}
	shared := etcdbarrier.NewBarrier(client(t, server), p, 4, opts...)
	require.NoError(t, shared.Join(t.Context(), 2))
	require.NoError(t, shared.Join(t.Context(), 3))
	others := make([]*etcdbarrier.Barrier, 2)
	for r := range others {
		others[r] = etcdbarrier.NewBarrier(client(t, server), p, 4, opts...)
		require.NoError(t, others[r].Join(t.Context(), r))
	}

	// Each rank's goroutine runs generation 0, then 1, in which rank 2
	// blocks on the lock rank 3 holds at the barrier.
	var wg sync.WaitGroup
	agg := lockorder.NewMutex("aggregation_lock")
	locked := make(chan struct{})
	errs := make([]error, 4)
	wg.Go(func() { // rank 3
		_, err := shared.Await(context.Background(), 3) // generation 0
		assert.NoError(t, err)
		agg.Lock()
		close(locked)
		_, errs[3] = shared.Await(context.Background(), 3)
		agg.Unlock()
	})
	wg.Go(func() { // rank 2
		_, err := shared.Await(context.Background(), 2) // generation 0
		assert.NoError(t, err)
		<-locked
		agg.Lock()
		agg.Unlock() //nolint:staticcheck // the wait is the point
		_, errs[2] = shared.Await(context.Background(), 2)
	})
	for r := range others {
		wg.Go(func() {
			_, err := others[r].Await(context.Background(), r) // generation 0
			assert.NoError(t, err)
			_, errs[r] = others[r].Await(context.Background(), r)
		})
	}
	wg.Wait()
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
	}
	be := brokenOf(t, errs[0])
	t.Log(be.Error())
	assert.Equal(t, []int{2}, be.Missing)
	require.Len(t, be.Why, 1)
	why := be.Why[0]
	assert.Equal(t, 3, why.HolderRank, why.Reason)
	assert.NotZero(t, why.Holder)
	assert.True(t, strings.HasPrefix(why.WaitingFor, "lock aggregation_lock#"), why.WaitingFor)
	assert.Contains(t, why.Reason, "alive (lease renewed ")
	assert.Contains(t, why.Reason, " before it answered, ")
	assert.Contains(t, why.Reason, "waiting for lock aggregation_lock#")
	assert.Contains(t, why.Reason, "(rank 3), which is waiting for barrier allreduce (rank 3, generation 1)")
	for r := 1; r < 4; r++ {
		assert.Equal(t, be.Error(), brokenOf(t, errs[r]).Error(), "rank %d: one verdict", r)
	}
	var held []lockorder.Violation
	for _, v := range lockorder.Violations() {
		if v.Kind == barrier.KindLockHeld && v.Source == "barrier/etcd" {
			held = append(held, v)
		}
	}
	require.NotEmpty(t, held, "rank 3 waited at the barrier holding aggregation_lock")
	assert.Contains(t, held[0].Message, "aggregation_lock")
	for _, b := range append(others, shared) {
		assert.NoError(t, b.Close())
	}
	requireClean(t, client(t, server), p)
}
