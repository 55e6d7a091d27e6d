//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// nestAll locks ms in order, then unlocks them in reverse.
func nestAll(ms []*lockorder.Mutex) {
	for _, m := range ms {
		m.Lock()
	}
	for i := len(ms) - 1; i >= 0; i-- {
		ms[i].Unlock()
	}
}

// BenchmarkDeepFirstPass takes depth locks nested, each time new ones, so
// that every Lock makes a new chain and records an edge from every lock
// held: the first sight of a deep, consistent nesting. ns/lock is per
// Lock of the first pass.
func BenchmarkDeepFirstPass(b *testing.B) {
	for _, depth := range []int{64, 128, 256} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
			lockorder.Reset()
			b.Cleanup(lockorder.Reset)
			b.ReportAllocs()
			for b.Loop() {
				ms := make([]*lockorder.Mutex, depth)
				for i := range ms {
					ms[i] = new(lockorder.Mutex)
				}
				nestAll(ms)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/lock")
		})
	}
}

// BenchmarkDeepRepeat takes the same depth locks nested again and again
// (a sharded map's lock-all), past R23's bound from depth 100 on: after
// the first pass every Lock is a cached chain, or, past depth 256 (R25),
// records nothing. ns/lock is per Lock.
func BenchmarkDeepRepeat(b *testing.B) {
	for _, depth := range []int{64, 256, 1024} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
			lockorder.Reset()
			b.Cleanup(lockorder.Reset)
			b.ReportAllocs()
			ms := make([]*lockorder.Mutex, depth)
			for i := range ms {
				ms[i] = new(lockorder.Mutex)
			}
			nestAll(ms)
			for b.Loop() {
				nestAll(ms)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/lock")
		})
	}
}

// deepChain returns n new mutexes of classes named prefix0, prefix1, ...
func deepChain(prefix string, n int) []*lockorder.Mutex {
	ms := make([]*lockorder.Mutex, n)
	for i := range ms {
		ms[i] = lockorder.NewMutex(fmt.Sprintf("%s%d", prefix, i))
	}
	return ms
}

// The first pass over a deep nesting records an edge from every held lock
// to each new one, n(n-1)/2 edges, each with the gate of the locks held
// around it. The gates of one acquisition share one list, so the pass
// costs O(n²); a gate list per edge made it O(n³), in time and in bytes.
// Each pair of classes also keeps its pairs of locks (RULES.md R26),
// about 400 bytes here.
func TestDeepNestingFirstPassCostsLittlePerEdge(t *testing.T) {
	fresh(t)
	const depth = 256 // the deepest that records every edge (R25)
	ms := deepChain("firstpass", depth)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run(func() { nestAll(ms) })
	runtime.ReadMemStats(&after)
	nodes, edges := lockorder.GraphSize()
	require.Equal(t, depth, nodes)
	require.Equal(t, depth*(depth-1)/2, edges)
	perEdge := float64(after.TotalAlloc-before.TotalAlloc) / float64(edges)
	assert.Less(t, perEdge, 1536.0, "bytes allocated per edge of the first pass")
	assert.Empty(t, lockorder.Violations())
}

// A deep consistent chain, then one inversion between its ends, is still
// a cycle; under a gate lock held around both orders, it is not.
func TestDeepChainThenInversionAtTheBottom(t *testing.T) {
	fresh(t)
	const depth = 255 // under the gate: 256 holds deep
	g := lockorder.NewMutex("deepgate")
	ms := deepChain("deepinv", depth)
	top, bottom := ms[0], ms[depth-1]
	run(func() {
		g.Lock()
		nestAll(ms)
		g.Unlock()
	})
	run(func() {
		g.Lock()
		lockAB(bottom, top)
		g.Unlock()
	})
	require.Empty(t, lockorder.Violations(), "both orders ran under the gate")

	run(func() { lockAB(bottom, top) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	require.Len(t, vs[0].Cycle, 2)
	assert.Equal(t, "deepinv254", vs[0].Cycle[0].From)
	assert.Equal(t, "deepinv0", vs[0].Cycle[0].To)

}

// An inversion in the middle of a deep chain, with the locks above it held
// for writing around both orders, is gated; without them it is a cycle.
func TestDeepChainThenInversionInTheMiddle(t *testing.T) {
	fresh(t)
	const depth = 256
	ms := deepChain("deepmid", depth)
	run(func() { nestAll(ms) })
	run(func() {
		for _, m := range ms[:100] {
			m.Lock()
		}
		lockAB(ms[200], ms[150])
		for i := 99; i >= 0; i-- {
			ms[i].Unlock()
		}
	})
	require.Empty(t, lockorder.Violations(), "ms[:100] gate both orders")

	run(func() { lockAB(ms[200], ms[150]) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Equal(t, "deepmid200", vs[0].Cycle[0].From)
	assert.Equal(t, "deepmid150", vs[0].Cycle[0].To)
}

// A nesting deeper than R23's bounds (held.MaxProving edges waiting on
// one goroutine) has its oldest acquisitions' edges added before their
// holds are released; they are cached then, as proved ones are, so the
// nesting repeated (a sharded map's lock-all, each call) takes the fast
// path rather than recording every edge again each time.
func TestADeepNestingPastTheBoundIsRecordedOnce(t *testing.T) {
	fresh(t)
	const depth = 256 // 32640 edges
	ms := make([]*lockorder.Mutex, depth)
	for i := range ms {
		ms[i] = new(lockorder.Mutex) // a shard of an array: each its own class
	}
	var mallocs [3]uint64
	run(func() {
		var m runtime.MemStats
		for i := range mallocs {
			runtime.ReadMemStats(&m)
			before := m.Mallocs
			nestAll(ms)
			runtime.ReadMemStats(&m)
			mallocs[i] = m.Mallocs - before
		}
	})
	_, edges := lockorder.GraphSize()
	require.Equal(t, depth*(depth-1)/2, edges)
	assert.Less(t, mallocs[1], uint64(depth), "allocations of the second pass (the first made %d)", mallocs[0])
	assert.Less(t, mallocs[2], uint64(depth), "allocations of the third pass")
	assert.Empty(t, lockorder.Violations())
}

// A goroutine that locks in a loop and never unlocks (a lost Unlock per
// item) holds more locks than an acquisition records edges from (R25):
// the graph stays within maxEdgeDepth²/2 edges, however many it holds,
// and each Lock costs no more than one made holding that many.
func TestALostUnlockPerItemKeepsTheGraphBounded(t *testing.T) {
	fresh(t)
	const n = 2000
	ms := make([]*lockorder.Mutex, n)
	for i := range ms {
		ms[i] = new(lockorder.Mutex)
	}
	done := make(chan struct{})
	go func() {
		for _, m := range ms {
			m.Lock() // never unlocked
		}
		close(done)
	}()
	<-done
	nodes, edges := lockorder.GraphSize()
	assert.LessOrEqual(t, edges, 256*255/2)
	assert.GreaterOrEqual(t, nodes, 256)
	assert.Empty(t, lockorder.Violations())
}

// A write made deeper than R25's bound is not seen, so it teaches its
// class's writers' gate nothing: Y's first write, under 256 shards and G,
// learns no gate from a part of its holds (which would have left G out),
// nor does Y's class count as written with no gate when its hold, the
// shards released under it, later sits within the bound. Every write of
// Y seen holds G, as does Y->X: R7 holds the read cycle back.
func TestAWriteDeeperThanTheBoundTeachesTheWritersGateNothing(t *testing.T) {
	for _, shards := range []int{254, 256} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			fresh(t)
			g, x, y := lockorder.NewMutex("dw-G"), lockorder.NewMutex("dw-X"), lockorder.NewRWMutex("dw-Y")
			z := lockorder.NewMutex("dw-Z")
			ss := make([]*lockorder.Mutex, shards)
			for i := range ss {
				ss[i] = new(lockorder.Mutex)
			}
			run(func() {
				for _, s := range ss {
					s.Lock()
				}
				g.Lock()
				y.Lock() // Y's first write
				for i := len(ss) - 1; i >= 0; i-- {
					ss[i].Unlock()
				}
				z.Lock() // under G and Y, within the bound now
				z.Unlock()
				y.Unlock()
				g.Unlock()
			})
			gatedCycle(g, x, y)
			assert.Empty(t, only(lockorder.KindCycle), "every write of Y held G, as did Y->X")
		})
	}
}

// A lock-all deeper than R25's bound, repeated, takes the fast path on
// every Lock after the first pass: its deeper acquisitions record nothing
// and are cached as such, as the others are.
func TestADeepLockAllPastR25RepeatedTakesTheFastPath(t *testing.T) {
	fresh(t)
	const depth = 512
	ms := make([]*lockorder.Mutex, depth)
	for i := range ms {
		ms[i] = new(lockorder.Mutex)
	}
	var cached [3]int
	run(func() {
		cached[0] = lockorder.Chains()
		nestAll(ms)
		cached[1] = lockorder.Chains()
		nestAll(ms)
		cached[2] = lockorder.Chains()
	})
	assert.GreaterOrEqual(t, cached[1]-cached[0], depth-1, "chains of the first pass cached")
	assert.Equal(t, cached[1], cached[2], "the second pass is all cached")
	assert.Empty(t, lockorder.Violations())
}
