package paramserver_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/paramserver"
)

// benchParams is a small model: 4 tensors of 256 floats.
func benchParams() paramserver.Params {
	p := make(paramserver.Params)
	for _, k := range []string{"l1.w", "l1.b", "l2.w", "l2.b"} {
		p[k] = fill(256, 1)
	}
	return p
}

// runWorkers runs body on exactly n goroutines, each with its own worker
// number, under b.RunParallel.
func runWorkers(b *testing.B, n int, body func(worker int, pb *testing.PB)) {
	b.SetParallelism(max(1, n/runtime.GOMAXPROCS(0)))
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		body(int(next.Add(1)-1)%n, pb)
	})
}

// BenchmarkApply measures accepted dense updates (every tensor) with 1, 8
// and 64 workers: Get, then Apply on the version read.
func BenchmarkApply(b *testing.B) {
	ctx := context.Background()
	b.Run("workers=1", func(b *testing.B) {
		s := newServer(b, benchParams(), paramserver.WithMaxStaleness(math.MaxUint64))
		grad := like(benchParams(), 0.001)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Apply(ctx, 0, grad, s.Get(0).Version); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, n := range []int{8, 64} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			s := newServer(b, benchParams(), paramserver.WithWorkers(n), paramserver.WithMaxStaleness(math.MaxUint64))
			grad := like(benchParams(), 0.001)
			b.ReportAllocs()
			runWorkers(b, n, func(w int, pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Apply(ctx, w, grad, s.Get(w).Version); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkApplySparse: each worker's gradient touches one tensor, so
// workers on different shards compute in parallel.
func BenchmarkApplySparse(b *testing.B) {
	ctx := context.Background()
	keys := []string{"l1.w", "l1.b", "l2.w", "l2.b"}
	for _, n := range []int{8, 64} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			s := newServer(b, benchParams(), paramserver.WithWorkers(n), paramserver.WithMaxStaleness(math.MaxUint64))
			b.ReportAllocs()
			runWorkers(b, n, func(w int, pb *testing.PB) {
				grad := paramserver.Params{keys[w%len(keys)]: fill(256, 0.001)}
				for pb.Next() {
					if _, err := s.Apply(ctx, w, grad, s.Get(w).Version); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkGet measures reading a snapshot: alone, from every core, and
// while a writer applies updates continuously.
func BenchmarkGet(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		s := newServer(b, benchParams())
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Get(0)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		const n = 64
		s := newServer(b, benchParams(), paramserver.WithWorkers(n))
		b.ReportAllocs()
		runWorkers(b, n, func(w int, pb *testing.PB) {
			for pb.Next() {
				_ = s.Get(w)
			}
		})
	})
	b.Run("parallel-under-writes", func(b *testing.B) {
		const n = 64
		s := newServer(b, benchParams(), paramserver.WithWorkers(n+1), paramserver.WithMaxStaleness(math.MaxUint64))
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			grad := like(benchParams(), 0.001)
			for {
				select {
				case <-stop:
					return
				default:
					_, _ = s.Apply(context.Background(), n, grad, s.Get(n).Version)
				}
			}
		}()
		b.ReportAllocs()
		runWorkers(b, n, func(w int, pb *testing.PB) {
			for pb.Next() {
				_ = s.Get(w)
			}
		})
		b.StopTimer()
		close(stop)
		<-done
	})
}

// naive is the baseline the server is compared with: one sync.RWMutex,
// updates in place, and a deep copy on every read (without the copy a
// reader would see torn updates, the incident's race).
type naive struct {
	mu      sync.RWMutex
	version uint64
	params  paramserver.Params
}

func (n *naive) get() paramserver.Snapshot {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return paramserver.Snapshot{Version: n.version, Params: n.params.Clone()}
}

func (n *naive) apply(grad paramserver.Params, lr float32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, g := range grad {
		p := n.params[k]
		for i := range g {
			p[i] -= lr * g[i]
		}
	}
	n.version++
}

// BenchmarkBaselineRWMutex runs the naive server through the same loops,
// for ratios: Get with a copy, and Get-then-Apply with 8 workers.
func BenchmarkBaselineRWMutex(b *testing.B) {
	b.Run("get", func(b *testing.B) {
		n := &naive{params: benchParams()}
		b.ReportAllocs()
		for b.Loop() {
			_ = n.get()
		}
	})
	b.Run("apply/workers=8", func(b *testing.B) {
		n := &naive{params: benchParams()}
		grad := like(benchParams(), 0.001)
		b.ReportAllocs()
		runWorkers(b, 8, func(_ int, pb *testing.PB) {
			for pb.Next() {
				_ = n.get()
				n.apply(grad, 0.01)
			}
		})
	})
}
