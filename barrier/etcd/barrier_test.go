package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
	etcdbarrier "github.com/syncwatch/syncwatch/barrier/etcd"
)

// procs makes one Barrier per rank, each with a client of its own, as if
// every rank ran in a process of its own, and joins them.
func procs(t *testing.T, p string, parties int, opts ...etcdbarrier.Option) []*etcdbarrier.Barrier {
	t.Helper()
	bs := make([]*etcdbarrier.Barrier, parties)
	for r := range parties {
		bs[r] = etcdbarrier.NewBarrier(client(t, server), p, parties, opts...)
		require.NoError(t, bs[r].Join(t.Context(), r))
	}
	return bs
}

// closeAll closes every handle and checks that nothing is left in etcd.
func closeAll(t *testing.T, cli *clientv3.Client, p string, bs []*etcdbarrier.Barrier) {
	t.Helper()
	var leases []clientv3.LeaseID
	for r, b := range bs {
		if b != nil {
			leases = append(leases, etcdbarrier.LeaseOf(b, r))
		}
	}
	for _, b := range bs {
		if b != nil {
			assert.NoError(t, b.Close())
		}
	}
	requireClean(t, cli, p)
	for _, l := range leases {
		ttl, err := cli.TimeToLive(t.Context(), l)
		require.NoError(t, err)
		assert.Equal(t, int64(-1), ttl.TTL, "lease %x not revoked", l)
	}
}

type result struct {
	gen uint64
	err error
}

// awaitRanks runs Await for each rank of ops (rank -> label) and returns
// the results.
func awaitRanks(t *testing.T, bs []*etcdbarrier.Barrier, ops map[int]string, limit time.Duration) map[int]result {
	t.Helper()
	return startRanks(bs, ops)(t, limit)
}

// startRanks starts Await for each rank of ops (rank -> label) and returns
// a function that collects the results.
func startRanks(bs []*etcdbarrier.Barrier, ops map[int]string) func(t *testing.T, limit time.Duration) map[int]result {
	var (
		mu  sync.Mutex
		out = map[int]result{}
		wg  sync.WaitGroup
	)
	for r, op := range ops {
		wg.Go(func() {
			var opts []barrier.AwaitOption
			if op != "" {
				opts = append(opts, barrier.Op(op))
			}
			gen, err := bs[r].Await(context.Background(), r, opts...)
			mu.Lock()
			out[r] = result{gen, err}
			mu.Unlock()
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return func(t *testing.T, limit time.Duration) map[int]result {
		t.Helper()
		select {
		case <-done:
		case <-time.After(limit):
			t.Fatalf("Awaits did not return within %v", limit)
		}
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

// awaitArrivals returns once n ranks' arrivals for generation gen are in
// etcd under prefix p. It watches, so it waits on the event, not on time.
func awaitArrivals(t *testing.T, cli *clientv3.Client, p string, gen uint64, n int) {
	t.Helper()
	under := fmt.Sprintf("%sg/%020d/a/", p, gen)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	w := cli.Watch(ctx, under, clientv3.WithPrefix())
	for {
		resp, err := cli.Get(ctx, under, clientv3.WithPrefix(), clientv3.WithCountOnly())
		require.NoError(t, err)
		if resp.Count >= int64(n) {
			return
		}
		select {
		case <-w:
		case <-ctx.Done():
			t.Fatalf("%d arrivals under %s did not appear: %v", n, under, ctx.Err())
		}
	}
}

func all(n int, op string) map[int]string {
	m := map[int]string{}
	for r := range n {
		m[r] = op
	}
	return m
}

func TestGenerationsCompleteInOrder(t *testing.T) {
	p := prefix(t)
	bs := procs(t, p, 4, etcdbarrier.WithTimeout(20*time.Second), etcdbarrier.WithHistory(2))
	for want := range uint64(5) {
		res := awaitRanks(t, bs, all(4, "step"), within(20*time.Second))
		for r, x := range res {
			require.NoError(t, x.err, "rank %d", r)
			assert.Equal(t, want, x.gen, "rank %d", r)
		}
	}
	// Old generations were deleted as new ones were decided.
	resp, err := client(t, server).Get(t.Context(), p+"g/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	assert.LessOrEqual(t, len(resp.Kvs), 3*(4+2))
	closeAll(t, client(t, server), p, bs)
}

func TestTimeoutBreaksTheGenerationForEveryRank(t *testing.T) {
	p := prefix(t)
	const timeout = 1500 * time.Millisecond
	bs := procs(t, p, 3, etcdbarrier.WithName("allreduce"), etcdbarrier.WithTimeout(timeout))
	res := awaitRanks(t, bs, map[int]string{0: "", 1: ""}, within(timeout))
	be0, be1 := brokenOf(t, res[0].err), brokenOf(t, res[1].err)
	assert.ErrorIs(t, res[0].err, barrier.ErrBroken)
	assert.ErrorIs(t, res[0].err, context.DeadlineExceeded)
	assert.Equal(t, be0.Error(), be1.Error(), "one verdict")
	assert.Equal(t, []int{2}, be0.Missing)
	assert.Equal(t, []int{0, 1}, be0.Arrived)
	assert.Equal(t, "allreduce", be0.Barrier)
	require.Len(t, be0.Why, 1)
	assert.Contains(t, be0.Why[0].Reason, "alive")
	assert.GreaterOrEqual(t, be0.Waited, timeout/2)

	// The missing rank collects the verdict at once, and all go on.
	start := time.Now()
	_, err := bs[2].Await(t.Context(), 2)
	assert.Less(t, time.Since(start), timeout)
	assert.Equal(t, be0.Error(), brokenOf(t, err).Error())
	res = awaitRanks(t, bs, all(3, ""), within(timeout))
	for r, x := range res {
		assert.NoError(t, x.err, "rank %d", r)
		assert.Equal(t, uint64(1), x.gen)
	}
	closeAll(t, client(t, server), p, bs)
}

func TestCollectiveMismatchAcrossProcesses(t *testing.T) {
	p := prefix(t)
	bs := procs(t, p, 3, etcdbarrier.WithTimeout(time.Minute))
	for range 2 {
		for r, x := range awaitRanks(t, bs, all(3, "model.all_sum"), time.Minute) {
			require.NoError(t, x.err, "rank %d", r)
		}
	}
	// Ranks 0 and 1 are in before rank 2 arrives at another operation, so
	// the verdict names all three (a rank still on its way when the mismatch
	// is decided is missing, not at an operation).
	start := time.Now()
	first := startRanks(bs, map[int]string{0: "model.all_sum", 1: "model.all_sum"})
	awaitArrivals(t, client(t, server), p, 2, 2)
	res := awaitRanks(t, bs, map[int]string{2: "bus.all_sum"}, time.Minute)
	maps.Copy(res, first(t, time.Minute))
	assert.Less(t, time.Since(start), 30*time.Second, "a mismatch must not wait for the timeout")
	var texts []string
	for r, x := range res {
		require.Error(t, x.err, "rank %d", r)
		assert.ErrorIs(t, x.err, barrier.ErrBroken)
		assert.ErrorIs(t, x.err, barrier.ErrCollectiveMismatch)
		texts = append(texts, x.err.Error())
	}
	assert.Equal(t, texts[0], texts[1])
	assert.Equal(t, texts[0], texts[2])
	var me *barrier.MismatchError
	require.True(t, errors.As(res[0].err, &me))
	assert.Equal(t, uint64(2), me.Generation)
	byOp := map[string][]int{}
	for _, o := range me.Ops {
		byOp[o.Op] = append(byOp[o.Op], o.Ranks...)
	}
	assert.ElementsMatch(t, []int{0, 1}, byOp["model.all_sum"])
	assert.Equal(t, []int{2}, byOp["bus.all_sum"])
	for _, r := range me.Ranks {
		if r.Rank == 2 {
			assert.Equal(t, "{bus.all_sum: 1, model.all_sum: 2}", barrier.FormatOpCounts(r.Counts))
		} else {
			assert.Equal(t, "{model.all_sum: 3}", barrier.FormatOpCounts(r.Counts))
		}
	}
	assert.Equal(t, "collective-mismatch", brokenOf(t, res[0].err).ErrorType())
	closeAll(t, client(t, server), p, bs)
}

// Ranks arriving at once with one rank at another operation: whichever
// arrives last, no rank ever sees the generation complete.
func TestCollectiveMismatchRaces(t *testing.T) {
	p := prefix(t)
	const parties = 4
	bs := procs(t, p, parties, etcdbarrier.WithTimeout(time.Minute))
	for round := range 12 {
		ops := all(parties, "model.all_sum")
		ops[round%parties] = "bus.all_sum"
		if round%3 == 2 {
			ops[(round+1)%parties] = "" // unlabelled arrivals are not checked
		}
		res := awaitRanks(t, bs, ops, time.Minute)
		for r, x := range res {
			require.Error(t, x.err, "round %d rank %d", round, r)
			assert.ErrorIs(t, x.err, barrier.ErrCollectiveMismatch, "round %d rank %d", round, r)
			assert.Equal(t, verdictText(res[0].err), verdictText(x.err), "round %d rank %d", round, r)
			assert.Equal(t, uint64(round), x.gen)
		}
	}
	closeAll(t, client(t, server), p, bs)
}
