package barrier_test

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// TestMain keeps the reports of the many generations the tests break on
// purpose off standard error, and fails the run if goroutines leaked or a
// violation other than a broken generation (which every test checks
// through the errors it gets) was left unchecked.
func TestMain(m *testing.M) {
	lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		if err := lockordertest.Find(lockordertest.IgnoreKind(barrier.KindBroken, barrier.KindCollectiveMismatch)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// requireCheckMode skips tests that need lockorder's check mode (the
// default under go test; SYNCWATCH_MODE can change it).
func requireCheckMode(t *testing.T) {
	t.Helper()
	if lockorder.CurrentMode() != lockorder.ModeCheck {
		t.Skip("needs lockorder ModeCheck")
	}
}

// reporting reports whether lockorder records reports: not in ModeOff.
func reporting() bool { return lockorder.CurrentMode() != lockorder.ModeOff }

// requireReporting skips tests about reports in ModeOff.
func requireReporting(t *testing.T) {
	t.Helper()
	if !reporting() {
		t.Skip("lockorder reports nothing in ModeOff")
	}
}

// resetViolations starts t with no recorded violations and forgets those
// it records.
func resetViolations(t *testing.T) {
	lockorder.Reset()
	t.Cleanup(lockorder.Reset)
}

// violations returns the recorded violations of kind k.
func violations(k lockorder.Kind) []lockorder.Violation {
	var out []lockorder.Violation
	for _, v := range lockorder.Violations() {
		if v.Kind == k {
			out = append(out, v)
		}
	}
	return out
}

// waitArrived blocks until the current generation of b is gen and ranks
// (in any order) have arrived for it.
func waitArrived(t *testing.T, b *barrier.Barrier, gen uint64, ranks ...int) {
	t.Helper()
	want := slices.Sorted(slices.Values(ranks))
	require.Eventually(t, func() bool {
		g, arrived := b.Current()
		slices.Sort(arrived)
		return g == gen && slices.Equal(arrived, want)
	}, 10*time.Second, time.Millisecond, "ranks %v never arrived for generation %d", ranks, gen)
}

// result is what one Await returned.
type result struct {
	gen  uint64
	err  error
	took time.Duration
}

// awaitAll runs Await(ctx, r) for each rank in its own goroutine and
// returns the results by rank. It fails t if they do not all return
// within limit.
func awaitAll(t *testing.T, b *barrier.Barrier, ranks []int, limit time.Duration) map[int]result {
	t.Helper()
	var (
		mu  sync.Mutex
		out = map[int]result{}
		wg  sync.WaitGroup
	)
	for _, r := range ranks {
		wg.Go(func() {
			start := time.Now()
			gen, err := b.Await(t.Context(), r)
			mu.Lock()
			out[r] = result{gen, err, time.Since(start)}
			mu.Unlock()
		})
	}
	waitGroup(t, &wg, limit)
	return out
}

// waitGroup waits for wg, failing t after limit.
func waitGroup(t *testing.T, wg *sync.WaitGroup, limit time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("goroutines did not return within %v", limit)
	}
}

// ranksExcept returns 0..n-1 without the given ranks.
func ranksExcept(n int, except ...int) []int {
	var out []int
	for r := range n {
		if !slices.Contains(except, r) {
			out = append(out, r)
		}
	}
	return out
}
