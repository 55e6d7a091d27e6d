//go:build !syncwatch_off

package lockorder_test

import (
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// These are quick engine benchmarks for development; bench/ holds the
// full suite against sync and go-deadlock.

func withMode(b *testing.B, m lockorder.Mode) {
	lockorder.Configure(lockorder.WithMode(m))
	b.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
}

func BenchmarkEngine(b *testing.B) {
	for _, m := range []lockorder.Mode{lockorder.ModeOff, lockorder.ModeTrace, lockorder.ModeCheck} {
		b.Run("uncontended/"+m.String(), func(b *testing.B) {
			withMode(b, m)
			var mu lockorder.Mutex
			for b.Loop() {
				mu.Lock()
				mu.Unlock()
			}
		})
		b.Run("nested/"+m.String(), func(b *testing.B) {
			withMode(b, m)
			var x, y lockorder.Mutex
			for b.Loop() {
				x.Lock()
				y.Lock()
				y.Unlock()
				x.Unlock()
			}
		})
		b.Run("rlock/"+m.String(), func(b *testing.B) {
			withMode(b, m)
			var mu lockorder.RWMutex
			for b.Loop() {
				mu.RLock()
				mu.RUnlock()
			}
		})
		b.Run("parallel-shared/"+m.String(), func(b *testing.B) {
			withMode(b, m)
			var mu lockorder.Mutex
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					mu.Lock()
					mu.Unlock()
				}
			})
		})
	}
	b.Run("uncontended/sync", func(b *testing.B) {
		var mu sync.Mutex
		for b.Loop() {
			mu.Lock()
			mu.Unlock()
		}
	})
	b.Run("nested/sync", func(b *testing.B) {
		var x, y sync.Mutex
		for b.Loop() {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	})
	b.Run("rlock/sync", func(b *testing.B) {
		var mu sync.RWMutex
		for b.Loop() {
			mu.RLock()
			mu.RUnlock()
		}
	})
	b.Run("parallel-shared/sync", func(b *testing.B) {
		var mu sync.Mutex
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				mu.Unlock()
			}
		})
	})
}
