//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/gls"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Review of R23 (commit 19e83e3): what it found, kept. The tests failed
// on 19e83e3.

// A missed cycle: o is its taker's own hold, released by it, across the
// acquisition of c; a, taken in between and handed to another goroutine,
// makes proving.sweep drop the whole acquisition, o -> c with a -> c.
// The reverse order c -> o elsewhere is a real inversion (the code before
// R23 reported it).
func TestOwnEdgeDroppedWithAHandedOffSibling(t *testing.T) {
	fresh(t)
	o, a, c := lockorder.NewMutex("rv1-O"), lockorder.NewMutex("rv1-A"), lockorder.NewMutex("rv1-C")
	run(func() {
		o.Lock()
		a.Lock()
		c.Lock() // o -> c (o its own), a -> c (a handed off below)
		c.Unlock()
		run(a.Unlock) // a's hold is another goroutine's to end
		o.Unlock()    // o proved its taker's own, across c
	})
	run(func() { lockAB(c, o) })
	assert.Len(t, only(lockorder.KindCycle), 1, "o -> c was held across by its taker, c -> o closes it")
}

// A performance cliff found in review: every own release of a hold edges
// wait on, and every new chain, walked all the edges waiting on the
// goroutine, up to MaxProving. Per-request locks taken under a lock the
// goroutine keeps cost ~18x what they cost under nothing (before R23:
// ~1.6x). Released now looks at the released lock's acquisitions only.
// Compare the two sub-benchmarks' ns/op.
func BenchmarkReleaseUnderAKeptLock(b *testing.B) {
	for _, under := range []bool{false, true} {
		name := "nothing-kept"
		if under {
			name = "a-lock-kept"
		}
		b.Run(name, func(b *testing.B) {
			lockorder.Reset()
			x := lockorder.NewMutex("rv4-x")
			keep := lockorder.NewMutex("rv4-keep")
			if under {
				keep.Lock()
				defer keep.Unlock()
				for range 2 * lockorder.MaxProvingEdges {
					var m lockorder.Mutex
					m.Lock()
					m.Unlock()
				}
			}
			for b.Loop() {
				var m lockorder.Mutex // a per-request lock: a new chain
				m.Lock()
				x.Lock()
				x.Unlock()
				m.Unlock()
			}
		})
	}
}

// A leak: a goroutine that exits holding a lock for good (a file locked
// on close) keeps its state, and now the edges waiting on it too, with
// every lock they name, until an exit check (ReachableDeadHolds) runs:
// up to MaxProving edges, about 1 KiB each, per such goroutine.
func TestExitedHolderRetainsWaitingEdges(t *testing.T) {
	fresh(t)
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	var files []*lockorder.Mutex
	for range 50 {
		f := new(lockorder.Mutex)
		files = append(files, f)
		run(func() {
			f.Lock() // closed for good; the goroutine exits
			for range 1000 {
				var m lockorder.Mutex // short-lived
				m.Lock()
				m.Unlock()
			}
		})
	}
	runtime.GC()
	gls.Trim() // what runs after a GC, once its goroutine is scheduled
	runtime.GC()
	runtime.ReadMemStats(&ms)
	retained := (int64(ms.HeapAlloc) - int64(before)) / 1024
	t.Logf("heap retained: %d KiB", retained)
	assert.Less(t, retained, int64(20<<10), "50 exited goroutines keep 50k dead locks reachable")
	runtime.KeepAlive(files)
}
