package barrier_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/marusama/cyclicbarrier"

	"github.com/syncwatch/syncwatch/barrier"
)

// One op of every benchmark below is one round trip of a parties-rank
// rendezvous: every rank arrives, every rank is released. The benchmark's
// goroutine is rank 0 and runs the b.Loop; parties-1 helper goroutines
// follow it round for round. b.RunParallel does not fit a fixed-party
// rendezvous (it hands iterations to goroutines unevenly), so the parallelism
// is the helpers'.
//
// Compared, in the same run:
//   - syncwatch: barrier.Barrier, as it runs under go test (lockorder's check
//     mode, so each Await also asks which locks the caller holds);
//   - chan: the smallest correct reusable barrier, a mutex, a count and a
//     channel closed per round (no timeout, no diagnosis);
//   - waitgroup: fork-join, rank 0 signals parties-1 channels and waits on a
//     sync.WaitGroup;
//   - marusama: github.com/marusama/cyclicbarrier.

// rendezvous is one round trip for rank; it reports the round it ended.
type rendezvous func(rank int) uint64

// benchRoundTrip measures round trips of newBarrier(parties).
func benchRoundTrip(b *testing.B, parties int, newBarrier func(parties int) rendezvous) {
	await := newBarrier(parties)
	last := atomic.Uint64{}
	last.Store(math.MaxUint64)
	var wg sync.WaitGroup
	for rank := 1; rank < parties; rank++ {
		wg.Go(func() {
			for {
				if await(rank) >= last.Load() {
					return
				}
			}
		})
	}
	b.ReportAllocs()
	var round uint64
	for b.Loop() {
		round = await(0)
	}
	// One more round, marked last before it starts, lets every helper out.
	last.Store(round + 1)
	await(0)
	wg.Wait()
}

func newSyncwatch(parties int) rendezvous {
	bar := barrier.New(parties)
	ctx := context.Background()
	return func(rank int) uint64 {
		g, err := bar.Await(ctx, rank)
		if err != nil {
			panic(err)
		}
		return g
	}
}

// chanBarrier is a mutex, a count and a channel closed per round.
type chanBarrier struct {
	mu      sync.Mutex
	parties int
	count   int
	round   uint64
	release chan struct{}
}

func newChan(parties int) rendezvous {
	c := &chanBarrier{parties: parties, release: make(chan struct{})}
	return func(int) uint64 {
		c.mu.Lock()
		round, release := c.round, c.release
		c.count++
		if c.count == c.parties {
			c.count, c.round, c.release = 0, c.round+1, make(chan struct{})
			c.mu.Unlock()
			close(release)
			return round
		}
		c.mu.Unlock()
		<-release
		return round
	}
}

// newWaitGroup is fork-join: rank 0 starts a round by sending it on each
// helper's channel and ends it when every helper has called Done.
func newWaitGroup(parties int) rendezvous {
	var (
		wg    sync.WaitGroup
		start = make([]chan uint64, parties)
		round uint64
	)
	for i := range start {
		start[i] = make(chan uint64, 1)
	}
	return func(rank int) uint64 {
		if rank == 0 {
			wg.Add(parties - 1)
			for _, c := range start[1:] {
				c <- round
			}
			wg.Wait()
			round++
			return round - 1
		}
		r := <-start[rank]
		wg.Done()
		return r
	}
}

func newMarusama(parties int) rendezvous {
	cb := cyclicbarrier.New(parties)
	ctx := context.Background()
	rounds := make([]uint64, parties) // each rank counts its own rounds
	return func(rank int) uint64 {
		if err := cb.Await(ctx); err != nil {
			panic(err)
		}
		rounds[rank]++
		return rounds[rank] - 1
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	impls := []struct {
		name string
		new  func(int) rendezvous
	}{
		{"syncwatch", newSyncwatch},
		{"chan", newChan},
		{"waitgroup", newWaitGroup},
		{"marusama", newMarusama},
	}
	for _, parties := range []int{2, 32} {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("parties=%d/%s", parties, impl.name), func(b *testing.B) {
				benchRoundTrip(b, parties, impl.new)
			})
		}
	}
}

// BenchmarkWideBreak measures the break of a generation of a wide barrier
// that one rank reached: what a waiter pays between noticing the end of
// its wait (here its context, already canceled) and returning the
// generation's error, which names every missing rank. It reports the
// length of the error's text. Each op uses a fresh barrier, so the broken
// generations that missing ranks would collect later are not kept.
func BenchmarkWideBreak(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, parties := range []int{32, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("parties=%d", parties), func(b *testing.B) {
			b.ReportAllocs()
			var text int
			for b.Loop() {
				_, err := barrier.New(parties).Await(ctx, 0)
				text = len(err.Error())
			}
			b.ReportMetric(float64(text), "errbytes")
		})
	}
}

// BenchmarkNew measures creating a barrier: its memory grows with the
// ranks that arrive, not with parties.
func BenchmarkNew(b *testing.B) {
	for _, parties := range []int{32, 100_000, 1 << 26} {
		b.Run(fmt.Sprintf("parties=%d", parties), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				barrier.New(parties)
			}
		})
	}
}
