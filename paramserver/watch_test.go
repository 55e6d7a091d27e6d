package paramserver_test

import (
	"context"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
)

// counting returns a server whose every version v has all elements equal
// to v: gradients of -1 with learning rate 1, any staleness accepted.
func counting(t *testing.T, opts ...paramserver.Option) (*paramserver.Server, paramserver.Params) {
	t.Helper()
	initial := paramserver.Params{"a": fill(3, 0), "b": fill(2, 0)}
	opts = append([]paramserver.Option{paramserver.WithMaxStaleness(math.MaxUint64), paramserver.WithLearningRate(1)}, opts...)
	return newServer(t, initial, opts...), like(initial, -1)
}

// TestWatchDeliversEveryVersionInOrder: while 64 workers apply, a watcher
// from version 0 sees every version, in order, each with its own
// parameters.
func TestWatchDeliversEveryVersionInOrder(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	const writers, applies = workers, 8
	s, grad := counting(t, paramserver.WithWorkers(writers), paramserver.WithHistory(writers*applies+1))
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for range applies {
				_, err := s.Apply(ctx, w, grad, s.Get(w).Version)
				assert.NoError(t, err)
				runtime.Gosched()
			}
		})
	}
	want := uint64(0)
	for snap, err := range s.Watch(ctx, 0) {
		require.NoError(t, err)
		require.Equal(t, want, snap.Version, "no gap, no reordering")
		require.True(t, uniform(snap.Params, float32(snap.Version)))
		if want == writers*applies {
			break
		}
		want++
	}
	wg.Wait()
	assert.Equal(t, uint64(writers*applies), want)
}

func TestWatchWaitsForFutureVersions(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s, grad := counting(t)
	got := make(chan uint64)
	go func() {
		defer close(got)
		for snap, err := range s.Watch(context.Background(), 2) {
			if !assert.NoError(t, err) {
				return
			}
			got <- snap.Version
			if snap.Version == 3 {
				return
			}
		}
	}()
	advance(t, s, 1, grad)
	select {
	case v := <-got:
		t.Fatalf("got version %d before it existed", v)
	case <-time.After(20 * time.Millisecond):
	}
	advance(t, s, 3, grad)
	assert.Equal(t, uint64(2), <-got)
	assert.Equal(t, uint64(3), <-got)
	_, open := <-got
	assert.False(t, open)
}

func TestWatchTrimmedHistoryEndsWithError(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s, grad := counting(t, paramserver.WithHistory(4))
	advance(t, s, 10, grad) // keeps 7, 8, 9, 10
	var errs []error
	var versions []uint64
	for snap, err := range s.Watch(context.Background(), 5) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		versions = append(versions, snap.Version)
	}
	assert.Empty(t, versions, "version 5 is gone: nothing after it is delivered, so nothing is skipped")
	require.Len(t, errs, 1, "the sequence ends after the error")
	require.ErrorIs(t, errs[0], paramserver.ErrHistoryTrimmed)
	var he *paramserver.HistoryError
	require.ErrorAs(t, errs[0], &he)
	assert.Equal(t, paramserver.HistoryError{Want: 5, Oldest: 7}, *he)
	assert.Equal(t, "history-trimmed", he.ErrorType())
	assert.EqualError(t, he, "paramserver: version 5 is no longer kept (oldest kept: 7); watch sooner or raise WithHistory")

	for snap, err := range s.Watch(context.Background(), 7) {
		require.NoError(t, err)
		assert.Equal(t, uint64(7), snap.Version, "the oldest kept version is still delivered")
		assert.True(t, uniform(snap.Params, 7))
		break
	}
}

func TestSlowWatcherGetsErrorNotGap(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s, grad := counting(t, paramserver.WithHistory(2))
	advance(t, s, 1, grad)
	var seen []uint64
	var final error
	for snap, err := range s.Watch(context.Background(), 0) {
		if err != nil {
			final = err
			break
		}
		seen = append(seen, snap.Version)
		if snap.Version == 1 {
			advance(t, s, 6, grad) // the watcher falls 5 behind
		}
	}
	assert.Equal(t, []uint64{0, 1}, seen)
	var he *paramserver.HistoryError
	require.ErrorAs(t, final, &he)
	assert.Equal(t, paramserver.HistoryError{Want: 2, Oldest: 5}, *he)
}

// goroutinesSettle waits for the goroutine count to drop to n.
func goroutinesSettle(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), n, "goroutines left behind")
}

func TestWatchStopsWhenConsumerBreaks(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s, grad := counting(t)
	advance(t, s, 5, grad)
	before := runtime.NumGoroutine()
	n := 0
	for _, err := range s.Watch(context.Background(), 0) {
		require.NoError(t, err)
		assert.Equal(t, before, runtime.NumGoroutine(), "Watch starts no goroutine")
		if n++; n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)
	goroutinesSettle(t, before)
}

func TestWatchStopsWhenContextEnds(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s, grad := counting(t)
	advance(t, s, 1, grad)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []error)
	go func() {
		var errs []error
		for snap, err := range s.Watch(ctx, 0) {
			if err != nil {
				errs = append(errs, err)
			} else {
				assert.LessOrEqual(t, snap.Version, uint64(1))
			}
		}
		done <- errs
	}()
	require.Eventually(t, func() bool {
		for _, w := range waitfor.All() {
			if w.Kind == waitfor.KindWatch && w.Object == s.String() {
				return assert.Equal(t, "waits for version 2, at version 1", w.Detail)
			}
		}
		return false
	}, 5*time.Second, time.Millisecond, "the watcher waits for version 2")
	cancel()
	errs := <-done
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], context.Canceled)
	assert.NotErrorIs(t, errs[0], paramserver.ErrWaitTimeout)
	var we *paramserver.WaitError
	require.ErrorAs(t, errs[0], &we)
	assert.Equal(t, uint64(2), we.Want)
	assert.Equal(t, uint64(1), we.Have)
	assert.Equal(t, "version-wait-canceled", we.ErrorType())
	goroutinesSettle(t, before)

	// A context that ends between two available versions also stops it.
	n := 0
	for _, err := range s.Watch(ctx, 0) {
		require.Error(t, err)
		n++
	}
	assert.Equal(t, 1, n)
}

func TestWatchMaxWait(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s, _ := counting(t, paramserver.WithMaxWait(20*time.Millisecond))
	var last error
	for _, err := range s.Watch(context.Background(), 0) {
		last = err
	}
	assert.ErrorIs(t, last, paramserver.ErrWaitTimeout)
	assert.ErrorIs(t, last, context.DeadlineExceeded)
}

func TestWaitVersion(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s, grad := counting(t)
	ctx := context.Background()

	snap, err := s.WaitVersion(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(0), snap.Version)

	got := make(chan paramserver.Snapshot)
	go func() {
		snap, err := s.WaitVersion(ctx, 2)
		assert.NoError(t, err)
		got <- snap
	}()
	advance(t, s, 1, grad)
	select {
	case snap := <-got:
		t.Fatalf("returned at version %d", snap.Version)
	case <-time.After(20 * time.Millisecond):
	}
	advance(t, s, 2, grad)
	snap = <-got
	assert.Equal(t, uint64(2), snap.Version)
	assert.True(t, uniform(snap.Params, 2))

	// Already reached: returns the current snapshot even with a done ctx.
	done, cancel := context.WithCancel(ctx)
	cancel()
	snap, err = s.WaitVersion(done, 1)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), snap.Version)
}

func TestWaitVersionTimesOut(t *testing.T) {
	defer lockordertest.VerifyNone(t)
	s, _ := counting(t)
	// The deadline is 20ms after WithTimeout reads the clock, which is
	// after start: the call cannot return before start+20ms.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	snap, err := s.WaitVersion(ctx, 5)
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	assert.Zero(t, snap)
	require.ErrorIs(t, err, paramserver.ErrWaitTimeout)
	var we *paramserver.WaitError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, uint64(5), we.Want)
	assert.Zero(t, we.Have)
	// Waited is counted from inside the call, a little after the
	// deadline was set: it is close to the bound, not necessarily over it.
	assert.Greater(t, we.Waited, 10*time.Millisecond)
	assert.Equal(t, "version-wait-timeout", we.ErrorType())
	assert.Contains(t, err.Error(), "paramserver: gave up waiting for version 5 after")

	s2, _ := counting(t, paramserver.WithMaxWait(10*time.Millisecond))
	_, err = s2.WaitVersion(context.Background(), 1)
	assert.ErrorIs(t, err, paramserver.ErrWaitTimeout, "the server's max wait bounds a wait without deadline")
}
