package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
	etcdbarrier "github.com/syncwatch/syncwatch/barrier/etcd"
	"github.com/syncwatch/syncwatch/barrier/etcd/embedded"
)

// verdictText is what must be the same for every rank of a generation:
// "ok", or the broken generation's whole text.
func verdictText(err error) string {
	if err == nil {
		return "ok"
	}
	var be *barrier.BrokenError
	if errors.As(err, &be) {
		return be.Error()
	}
	return "not a verdict: " + err.Error()
}

// isVerdict reports whether err is a verdict (nil or a broken
// generation), not an unknown outcome.
func isVerdict(err error) bool { return err == nil || errors.Is(err, barrier.ErrBroken) }

// countVerdicts watches every generation key under p and counts the
// writes of each: a generation is written once pending and once decided,
// never more. It returns a function that stops the watch and returns
// the counts.
func countVerdicts(t *testing.T, cli *clientv3.Client, p string) func() map[string]int {
	ctx, cancel := context.WithCancel(context.Background())
	wch := cli.Watch(ctx, p+"g/", clientv3.WithPrefix())
	counts := map[string]int{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for resp := range wch {
			for _, ev := range resp.Events {
				key := string(ev.Kv.Key)
				if ev.Type == mvccpb.PUT && len(key) == len(p)+2+20 { // P/g/GEN
					counts[key]++
				}
			}
		}
	}()
	return func() map[string]int {
		cancel()
		<-done
		return counts
	}
}

// A rank whose lease is gone (its process died: here its lease is
// revoked from outside, as etcd does when it expires) breaks the
// generation at once for the others, who are told its lease expired.
func TestLeaseExpiryBreaksTheGenerationAtOnce(t *testing.T) {
	p := prefix(t)
	const timeout = time.Minute
	bs := procs(t, p, 3, etcdbarrier.WithTimeout(timeout))
	cli := client(t, server)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Go(func() { _, errs[r] = bs[r].Await(context.Background(), r) })
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	_, err := cli.Revoke(t.Context(), etcdbarrier.LeaseOf(bs[2], 2))
	require.NoError(t, err)
	wg.Wait()
	assert.Less(t, time.Since(start), 30*time.Second, "the break must not wait for the timeout")
	be := brokenOf(t, errs[0])
	assert.Equal(t, be.Error(), verdictText(errs[1]))
	assert.ErrorIs(t, errs[0], etcdbarrier.ErrLeaseExpired)
	assert.Equal(t, []int{2}, be.Missing)
	require.Len(t, be.Why, 1)
	assert.Contains(t, be.Why[0].Reason, "lease expired at ")
	// The next generation breaks at once too: rank 2 is gone.
	_, err = bs[0].Await(t.Context(), 0)
	assert.ErrorIs(t, err, etcdbarrier.ErrLeaseExpired)
	// The dead rank's handle says so.
	_, err = bs[2].Await(t.Context(), 2)
	assert.ErrorIs(t, err, etcdbarrier.ErrLeaseLost)
	closeAll(t, cli, p, bs)
}

// handle joins rank of the barrier of parties ranks under p through
// cli, as a process of its own.
func handle(t *testing.T, cli *clientv3.Client, p string, parties, rank int, opts ...etcdbarrier.Option) *etcdbarrier.Barrier {
	t.Helper()
	b := etcdbarrier.NewBarrier(cli, p, parties, opts...)
	require.NoError(t, b.Join(t.Context(), rank))
	return b
}

// A client cut off from etcd (its connection closed, its lease left to
// expire) is seen as gone after its lease's TTL, and breaks the others'
// generation; its own waiting Await returns at once, without a verdict
// of its own.
func TestClientCutOff(t *testing.T) {
	p := prefix(t)
	const timeout = 30 * time.Second
	opts := []etcdbarrier.Option{etcdbarrier.WithTimeout(timeout), etcdbarrier.WithLeaseTTL(time.Second),
		etcdbarrier.WithDecideTimeout(time.Second)}
	cut, err := server.Client()
	require.NoError(t, err)
	bs := []*etcdbarrier.Barrier{
		handle(t, client(t, server), p, 3, 0, opts...),
		handle(t, client(t, server), p, 3, 1, opts...),
		handle(t, cut, p, 3, 2, opts...),
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for r := range 3 {
		if r == 1 {
			continue // rank 1 comes late, so the generation cannot complete
		}
		wg.Go(func() { _, errs[r] = bs[r].Await(context.Background(), r) })
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	require.NoError(t, cut.Close())
	wg.Wait()
	assert.Less(t, time.Since(start), timeout/2, "the break must come from the lease, not the timeout")
	assert.False(t, isVerdict(errs[2]), "the cut-off rank cannot know the verdict: %v", errs[2])
	be := brokenOf(t, errs[0])
	assert.ErrorIs(t, errs[0], etcdbarrier.ErrLeaseExpired)
	assert.Equal(t, []int{1, 2}, be.Missing)
	_, err = bs[1].Await(t.Context(), 1)
	assert.Equal(t, be.Error(), verdictText(err), "the late rank gets the same verdict")
	assert.NoError(t, bs[0].Close())
	assert.NoError(t, bs[1].Close())
	assert.Error(t, bs[2].Close(), "its client is closed")
	// The cut-off rank's keys went with its lease; the last Close
	// cleaned the rest.
	requireClean(t, client(t, server), p)
}

// Two ranks joined through one handle whose client is cut off: their
// leases expire one after the other, and the break comes at the first.
// The verdict names both as gone, the second through the first: its
// process lost a lease of the same handle.
func TestRanksOfACutHandleAreBothGone(t *testing.T) {
	p := prefix(t)
	const timeout = 30 * time.Second
	opts := []etcdbarrier.Option{etcdbarrier.WithTimeout(timeout), etcdbarrier.WithLeaseTTL(time.Second),
		etcdbarrier.WithDecideTimeout(time.Second)}
	cut, err := server.Client()
	require.NoError(t, err)
	first := handle(t, client(t, server), p, 4, 0, opts...)
	late := handle(t, client(t, server), p, 4, 1, opts...)
	both := etcdbarrier.NewBarrier(cut, p, 4, opts...)
	require.NoError(t, both.Join(t.Context(), 2))
	time.Sleep(300 * time.Millisecond) // the two leases expire apart
	require.NoError(t, both.Join(t.Context(), 3))
	done := make(chan error, 1)
	go func() { _, err := first.Await(context.Background(), 0); done <- err }()
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, cut.Close())
	be := brokenOf(t, <-done)
	assert.Equal(t, []int{1, 2, 3}, be.Missing)
	for _, m := range be.Why {
		if m.Rank >= 2 {
			assert.Contains(t, m.Reason, "lease expired at", "rank %d", m.Rank)
		}
	}
	_, err = late.Await(t.Context(), 1)
	assert.Equal(t, be.Error(), verdictText(err))
	assert.NoError(t, first.Close())
	assert.NoError(t, late.Close())
	assert.Error(t, both.Close(), "its client is closed")
}

// etcd restarts while ranks wait. (Stopping the embedded etcd takes
// about six seconds, its graceful shutdown of the clients' streams.) A
// restart within the bound loses nothing: the generation completes. One
// that outlasts the bound ends every wait within it plus the decide
// timeout, without a verdict; once etcd is back, every rank gets one.
func TestEtcdRestartMidGeneration(t *testing.T) {
	srv, err := embedded.Start(t.TempDir())
	require.NoError(t, err)
	defer srv.Close()
	join := func(t *testing.T, timeout time.Duration) (string, []*etcdbarrier.Barrier) {
		p := prefix(t)
		bs := make([]*etcdbarrier.Barrier, 3)
		for r := range bs {
			bs[r] = handle(t, client(t, srv), p, 3, r, etcdbarrier.WithTimeout(timeout),
				etcdbarrier.WithDecideTimeout(2*time.Second), etcdbarrier.WithLeaseTTL(5*time.Second))
		}
		return p, bs
	}
	closeAll := func(t *testing.T, p string, bs []*etcdbarrier.Barrier) {
		for _, b := range bs {
			assert.NoError(t, b.Close())
		}
		requireClean(t, client(t, srv), p)
	}

	t.Run("within the bound", func(t *testing.T) {
		p, bs := join(t, 20*time.Second)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for r := range 2 {
			wg.Go(func() { _, errs[r] = bs[r].Await(context.Background(), r) })
		}
		time.Sleep(300 * time.Millisecond)
		srv.Stop()
		require.NoError(t, srv.Restart())
		_, errs[2] = bs[2].Await(context.Background(), 2)
		wg.Wait()
		for r, err := range errs {
			assert.NoError(t, err, "rank %d", r)
		}
		closeAll(t, p, bs)
	})

	t.Run("past the bound", func(t *testing.T) {
		const timeout = 2 * time.Second
		p, bs := join(t, timeout)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		took := make([]time.Duration, 2)
		for r := range 2 {
			wg.Go(func() {
				start := time.Now()
				_, errs[r] = bs[r].Await(context.Background(), r)
				took[r] = time.Since(start)
			})
		}
		time.Sleep(300 * time.Millisecond)
		stopped := make(chan struct{})
		go func() { srv.Stop(); close(stopped) }()
		wg.Wait()
		for r := range 2 {
			assert.Less(t, took[r], timeout+2*time.Second+3*time.Second, "rank %d waited past its bound", r)
			assert.ErrorIs(t, errs[r], etcdbarrier.ErrUnavailable, "rank %d", r)
		}
		<-stopped
		require.NoError(t, srv.Restart())
		// Every rank now gets the generation's one verdict.
		texts := make([]string, 3)
		for r := range 3 {
			wg.Go(func() {
				gen, err := bs[r].Await(context.Background(), r)
				assert.Equal(t, uint64(0), gen, "rank %d stayed on its generation", r)
				assert.True(t, isVerdict(err), "rank %d: %v", r, err)
				texts[r] = verdictText(err)
			})
		}
		wg.Wait()
		assert.Equal(t, texts[0], texts[1])
		assert.Equal(t, texts[0], texts[2])
		closeAll(t, p, bs)
	})
}

// A slow rank arriving right at the bound: whatever the race between its
// arrival and the first arriver's timeout, every rank gets one verdict,
// and the next generation completes.
func TestSlowRankAtTheBound(t *testing.T) {
	p := prefix(t)
	const timeout = 800 * time.Millisecond
	bs := procs(t, p, 3, etcdbarrier.WithTimeout(timeout))
	stop := countVerdicts(t, client(t, server), p)
	var gen uint64
	for i, lag := range []time.Duration{-60, -20, -5, 0, 5, 20, 60} {
		lag := timeout + lag*time.Millisecond
		var wg sync.WaitGroup
		res := make([]result, 3)
		for r := range 3 {
			wg.Go(func() {
				if r == 2 {
					time.Sleep(lag)
				}
				res[r].gen, res[r].err = bs[r].Await(context.Background(), r)
			})
		}
		wg.Wait()
		for r := range 3 {
			require.True(t, isVerdict(res[r].err), "case %d rank %d: %v", i, r, res[r].err)
			assert.Equal(t, gen, res[r].gen, "case %d rank %d", i, r)
			assert.Equal(t, verdictText(res[0].err), verdictText(res[r].err), "case %d rank %d", i, r)
		}
		gen++
	}
	for key, n := range stop() {
		assert.LessOrEqual(t, n, 2, "%s written %d times", key, n)
	}
	closeAll(t, client(t, server), p, bs)
}

// A wait that ends while its rank is still arriving, before any rank
// opened the generation, still breaks it: the first rank of a barrier
// whose bound is over before its arrival is sent gets the generation's
// verdict, not an "unavailable" error, and the other rank collects the
// same verdict.
func TestWaitEndedBeforeTheGenerationOpened(t *testing.T) {
	p := prefix(t)
	bs := procs(t, p, 2, etcdbarrier.WithTimeout(time.Nanosecond))
	_, err := bs[0].Await(t.Context(), 0)
	be := brokenOf(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, []int{1}, be.Missing)
	_, err = bs[1].Await(t.Context(), 1)
	assert.Equal(t, be.Error(), brokenOf(t, err).Error())

	// A context cancelled before the call: the same.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p2 := prefix(t)
	bs2 := procs(t, p2, 2)
	_, err = bs2[0].Await(ctx, 0)
	be = brokenOf(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = bs2[1].Await(t.Context(), 1)
	assert.Equal(t, be.Error(), brokenOf(t, err).Error())
	closeAll(t, client(t, server), p, bs)
	closeAll(t, client(t, server), p2, bs2)
}

// Contexts cancelled at random points around the last arrival: the
// generation completes or breaks, once, the same for every rank, and
// never affects the next one.
func TestCancellationRaces(t *testing.T) {
	p := prefix(t)
	const timeout = 20 * time.Second
	bs := procs(t, p, 3, etcdbarrier.WithTimeout(timeout))
	stop := countVerdicts(t, client(t, server), p)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		after := time.Duration(rng.IntN(30)) * time.Millisecond
		var wg sync.WaitGroup
		res := make([]result, 3)
		for r := range 3 {
			wg.Go(func() {
				c := context.Background()
				if r == 0 {
					c = ctx
				}
				res[r].gen, res[r].err = bs[r].Await(c, r)
			})
		}
		time.AfterFunc(after, cancel)
		wg.Wait()
		cancel()
		for r := range 3 {
			require.True(t, isVerdict(res[r].err), "round %d rank %d: %v", i, r, res[r].err)
			assert.Equal(t, uint64(i), res[r].gen, "round %d rank %d", i, r)
			assert.Equal(t, verdictText(res[0].err), verdictText(res[r].err), "round %d rank %d", i, r)
		}
		if res[0].err != nil {
			assert.ErrorIs(t, res[0].err, context.Canceled)
		}
	}
	for key, n := range stop() {
		assert.LessOrEqual(t, n, 2, "%s written %d times", key, n)
	}
	closeAll(t, client(t, server), p, bs)
}

// A rank's process dies at a random point of a generation, many times
// (its lease revoked, or its client closed without any cleanup): no
// surviving rank waits past its bound, and every rank of a generation
// that gets a verdict gets the same one.
func TestRandomDeathsKeepOneVerdictPerGeneration(t *testing.T) {
	const (
		parties = 4
		timeout = 3 * time.Second
		rounds  = 12
	)
	rng := rand.New(rand.NewPCG(3, 4))
	opts := []etcdbarrier.Option{etcdbarrier.WithTimeout(timeout), etcdbarrier.WithLeaseTTL(time.Second),
		etcdbarrier.WithDecideTimeout(2 * time.Second)}
	for round := range rounds {
		p := fmt.Sprintf("%sround-%d/", prefix(t), round)
		victim := rng.IntN(parties)
		closeClient := rng.IntN(2) == 0
		clis := make([]*clientv3.Client, parties)
		bs := make([]*etcdbarrier.Barrier, parties)
		for r := range parties {
			cli, err := server.Client()
			require.NoError(t, err)
			clis[r] = cli
			bs[r] = handle(t, cli, p, parties, r, opts...)
		}
		stop := countVerdicts(t, client(t, server), p)
		gens := 3
		kill := time.Duration(rng.IntN(int(timeout / 2)))
		var (
			mu      sync.Mutex
			verdict = map[uint64]map[int]string{}
			wg      sync.WaitGroup
		)
		for r := range parties {
			wg.Go(func() {
				for range gens {
					start := time.Now()
					gen, err := bs[r].Await(context.Background(), r)
					took := time.Since(start)
					if r == victim && !isVerdict(err) {
						return // it died
					}
					assert.Less(t, took, timeout+2*time.Second+3*time.Second, "round %d rank %d waited past its bound", round, r)
					mu.Lock()
					if verdict[gen] == nil {
						verdict[gen] = map[int]string{}
					}
					verdict[gen][r] = verdictText(err)
					mu.Unlock()
					time.Sleep(time.Duration(rand.IntN(50)) * time.Millisecond)
				}
			})
		}
		time.Sleep(kill)
		if closeClient {
			clis[victim].Close()
		} else {
			_, err := client(t, server).Revoke(t.Context(), etcdbarrier.LeaseOf(bs[victim], victim))
			require.NoError(t, err)
		}
		wg.Wait()
		// The survivors shut down cleanly once the victim's key is gone.
		require.Eventually(t, func() bool {
			resp, err := client(t, server).Get(t.Context(), p+"c/m/", clientv3.WithPrefix(), clientv3.WithCountOnly())
			return err == nil && resp.Count == parties-1
		}, 10*time.Second, 50*time.Millisecond)
		for gen, byRank := range verdict {
			var first string
			for _, v := range byRank {
				if first == "" {
					first = v
				}
				assert.Equal(t, first, v, "round %d generation %d: ranks disagree: %v", round, gen, byRank)
			}
		}
		for key, n := range stop() {
			assert.LessOrEqual(t, n, 2, "round %d: %s written %d times", round, key, n)
		}
		for r, b := range bs {
			err := b.Close()
			if r != victim {
				assert.NoError(t, err)
			}
			clis[r].Close()
		}
		requireClean(t, client(t, server), p)
	}
}
