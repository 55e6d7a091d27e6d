//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// R23 past its bound (held.MaxProving edges waiting on one goroutine):
// handles that their goroutine locks for good when it closes them (a
// closed file's lock, by design), one anonymous lock each, with the
// goroutine going on under them: it takes the registry, a short section
// ended at once, thousands of edges' worth. Those edges wait for the
// handles' release, which never comes; pushed out past the bound they
// were added as though proved (a nesting's would be), and closed a cycle
// with "registry, then handle" (CloseAll): a false report, since no
// goroutine but the keeper ever locks a closed handle. A section ended
// under the holds is no nesting: its edges are dropped, however it ends:
// an Unlock, an Unlock by another goroutine (a hand-off, legal Go), a
// WaitGroup.Wait (on a flush whose worker locks the registry: group ->
// registry, and handle -> group would close the cycle), or an Unlock
// after a Cond.Wait, which does not end the section but takes the
// registry again as the section's hold (Cond.relockL marks it).
func TestSectionsUnderHandlesKeptForGoodPastTheBoundCloseNoCycle(t *testing.T) {
	type handle struct {
		mu   lockorder.Mutex
		data int
	}
	type registry struct {
		mu    lockorder.Mutex
		wg    lockorder.WaitGroup
		cond  *lockorder.Cond
		ready bool
		hs    []*handle
	}
	for _, tc := range []struct {
		name    string
		section func(reg *registry, h *handle)
	}{
		{"unlocked", func(reg *registry, h *handle) {
			reg.mu.Lock()
			reg.hs = append(reg.hs, h)
			reg.mu.Unlock()
		}},
		{"handed off", func(reg *registry, h *handle) {
			reg.mu.Lock()
			reg.hs = append(reg.hs, h)
			done := make(chan struct{})
			go func() { reg.mu.Unlock(); close(done) }()
			<-done
		}},
		{"waited on", func(reg *registry, h *handle) {
			reg.mu.Lock()
			reg.hs = append(reg.hs, h)
			reg.mu.Unlock()
			reg.wg.Go(func() { // a flush: the worker touches the registry
				reg.mu.Lock()
				reg.mu.Unlock()
			})
			reg.wg.Wait()
		}},
		{"with a Cond.Wait", func(reg *registry, h *handle) {
			reg.mu.Lock()
			h.mu.Lock() // initialised under the registry: edges pushed out while it is held
			h.mu.Unlock()
			reg.ready = false
			go func() {
				reg.mu.Lock()
				reg.ready = true
				reg.cond.Signal()
				reg.mu.Unlock()
			}()
			for !reg.ready {
				reg.cond.Wait()
			}
			reg.hs = append(reg.hs, h)
			reg.mu.Unlock()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh(t)
			var reg registry
			reg.cond = lockorder.NewCond(&reg.mu)
			open := func() {
				h := new(handle)
				tc.section(&reg, h)
				h.mu.Lock() // used
				h.data++
				h.mu.Unlock()
			}
			closeAll := func() {
				reg.mu.Lock()
				for _, h := range reg.hs {
					h.mu.Lock() // closed: locked for good
				}
				reg.hs = nil
				reg.mu.Unlock()
			}
			run(func() {
				for range 3 {
					for range 60 {
						open()
					}
					closeAll()
					open() // under every handle closed so far
				}
			})
			assert.Empty(t, only(lockorder.KindCycle), "no goroutine but the keeper locks a closed handle")
		})
	}
}

// The edges of sections pushed out past R23's bound are dropped, and
// their chains cached: a loop of sections under holds kept for good (100
// anonymous locks, 50 sections of 100 edges each, past the bound) stays
// on the fast path, rather than recording every section anew at each
// Lock (each new record pushing out the next one).
func TestALoopOfSectionsUnderHoldsKeptForGoodTakesTheFastPath(t *testing.T) {
	fresh(t)
	kept := make([]*lockorder.Mutex, 100)
	secs := make([]*lockorder.Mutex, 50)
	for i := range kept {
		kept[i] = new(lockorder.Mutex)
	}
	for i := range secs {
		secs[i] = new(lockorder.Mutex)
	}
	loop := func(rounds int) {
		for range rounds {
			for _, s := range secs {
				s.Lock()
				s.Unlock()
			}
		}
	}
	var mallocs uint64
	run(func() {
		for _, k := range kept {
			k.Lock() // for good
		}
		loop(3)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		loop(10)
		runtime.ReadMemStats(&ms)
		mallocs = ms.Mallocs - before
	})
	assert.Less(t, mallocs, uint64(len(secs)), "allocations of 10 rounds of the loop")
	assert.Empty(t, lockorder.Violations())
}
