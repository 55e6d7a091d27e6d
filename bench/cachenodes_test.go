package bench_test

import (
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// cacheNodes is how many nodes one op of case (n) makes.
const cacheNodes = 100_000

// BenchmarkCacheNodes is case (n): a cache whose every lookup makes a node
// with a lock of its own and locks it under the cache's read lock, as a
// storage engine's block cache does. Every lock is new, and all are of
// one class, named as syncwatch test names the locks of one field. An op
// makes cacheNodes nodes; run it with -benchtime 1x. It reports the time
// per node (ns/node): in check mode, a new lock under a held one must not
// cost a new chain, nor a stack more than its first acquisition's.
func BenchmarkCacheNodes(b *testing.B) {
	b.Run("impl=sync", func(b *testing.B) {
		var cache sync.RWMutex
		for b.Loop() {
			for range cacheNodes {
				cache.RLock()
				n := new(sync.Mutex)
				n.Lock()
				n.Unlock()
				cache.RUnlock()
			}
		}
		perNode(b)
	})
	if !instrumented {
		return
	}
	b.Run("impl=check", func(b *testing.B) {
		lockorder.Reset()
		defer lockorder.Reset()
		useMode(b, lockorder.ModeCheck)
		var cache lockorder.RWMutex
		for b.Loop() {
			for range cacheNodes {
				cache.RLock()
				n := new(lockorder.Mutex)
				n.SetClassIfNew("bench.node.mu")
				n.Lock()
				n.Unlock()
				cache.RUnlock()
			}
		}
		perNode(b)
	})
}

// perNode reports b's time per node of case (n).
func perNode(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cacheNodes), "ns/node")
}
