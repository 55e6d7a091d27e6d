//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
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
	type registry struct {
		mu    lockorder.Mutex
		wg    lockorder.WaitGroup
		inner lockorder.Mutex
		cond  *lockorder.Cond
		ready bool
		hs    []*keptHandle
	}
	// awaitSignal waits on the registry's Cond, holding its lock, until
	// another goroutine has signalled it.
	awaitSignal := func(reg *registry) {
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
	}
	for _, tc := range []struct {
		name    string
		section func(reg *registry, h *keptHandle)
	}{
		{"unlocked", func(reg *registry, h *keptHandle) {
			reg.mu.Lock()
			reg.hs = append(reg.hs, h)
			reg.mu.Unlock()
		}},
		{"handed off", func(reg *registry, h *keptHandle) {
			reg.mu.Lock()
			reg.hs = append(reg.hs, h)
			done := make(chan struct{})
			go func() { reg.mu.Unlock(); close(done) }()
			<-done
		}},
		{"waited on", func(reg *registry, h *keptHandle) {
			reg.mu.Lock()
			reg.hs = append(reg.hs, h)
			reg.mu.Unlock()
			reg.wg.Go(func() { // a flush: the worker touches the registry
				reg.mu.Lock()
				reg.mu.Unlock()
			})
			reg.wg.Wait()
		}},
		{"with a Cond.Wait", func(reg *registry, h *keptHandle) {
			reg.mu.Lock()
			h.mu.Lock() // initialised under the registry: edges pushed out while it is held
			h.mu.Unlock()
			awaitSignal(reg)
			reg.hs = append(reg.hs, h)
			reg.mu.Unlock()
		}},
		{"with a Cond.Wait over a tried lock", func(reg *registry, h *keptHandle) {
			// The Wait takes the registry again on top of the tried
			// lock: a new chain, a second acquisition of the registry
			// whose edges wait. The Unlock ends both.
			reg.mu.Lock()
			h.mu.Lock()
			h.mu.Unlock()
			if !reg.inner.TryLock() {
				panic("inner is free")
			}
			awaitSignal(reg)
			reg.inner.Unlock()
			reg.hs = append(reg.hs, h)
			reg.mu.Unlock()
		}},
	} {
		for _, away := range []bool{false, true} {
			name := tc.name
			if away {
				// The goroutine's state is not in its home slot, which
				// another goroutine's took first: a Cond.Wait's relock
				// missed marking its hold there, and the sections' edges,
				// pushed out, were added as a nesting's.
				name += ", its state away from home"
			}
			t.Run(name, func(t *testing.T) {
				fresh(t)
				var reg registry
				reg.cond = lockorder.NewCond(&reg.mu)
				keptHandlesCloseNoCycle(t, away, func() {
					h := new(keptHandle)
					tc.section(&reg, h)
					h.use()
				}, func() { closeAllUnder(&reg.mu, &reg.hs) })
			})
		}
	}
}

// takeHomeSlot makes a goroutine that shares the caller's home slot in
// lockorder's table of goroutine states (ids equal modulo gls.HomeSlots)
// take that slot, by holding a lock, before the caller, which holds
// none, gets a state: the caller's goes elsewhere. If that goroutine
// found the slot taken already, by a third goroutine's state, release
// does nothing: the caller's state is away while that one stays, which
// the caller checks (runAway). It reports false if no goroutine of the
// caller's slot came up. release ends the goroutine, and returns once it
// has exited.
func takeHomeSlot() (release func(), ok bool) {
	const slots = gls.HomeSlots
	me := goid.ID()
	done, exited := make(chan struct{}), make(chan struct{})
	const (
		other = iota // an id of another slot
		home         // in the slot, holding its lock
		taken        // an id of the slot, which another state holds
	)
	found := make(chan int)
	for range 4 * slots {
		go func() {
			id := goid.ID()
			if id%slots != me%slots {
				found <- other
				return
			}
			defer close(exited)
			mu := lockorder.NewMutex("home-slot-taker")
			mu.Lock() // held: its state stays in the slot
			if gls.Home(id) == nil {
				mu.Unlock()
				found <- taken
				return
			}
			found <- home
			<-done
			mu.Unlock()
		}()
		switch <-found {
		case home:
			return func() { close(done); <-exited }, true
		case taken:
			// Another goroutine's state holds the slot: the caller's
			// is away while that one stays, which its probe checks.
			<-exited
			return func() {}, true
		}
	}
	return nil, false
}

// runAway runs f as run does, in a goroutine whose state is kept away
// from its home slot: another goroutine's state holds the slot until f
// has returned.
func runAway(t *testing.T, f func()) {
	t.Helper()
	if gls.AllAway {
		run(f) // every state is away in this build
		return
	}
	for range 64 {
		ran := false
		run(func() {
			release, ok := takeHomeSlot()
			if !ok {
				return // try from another goroutine, with another slot
			}
			defer release()
			probe := lockorder.NewMutex("away-probe")
			probe.Lock()
			away := gls.Home(goid.ID()) == nil
			probe.Unlock()
			if !away {
				return // the slot's other state left meanwhile: try again
			}
			ran = true
			f()
		})
		if ran {
			return
		}
	}
	t.Fatal("no goroutine's state could be kept away from its home slot")
}

// keptHandle is a handle with a lock of its own, locked for good when it
// is closed.
type keptHandle struct {
	mu   lockorder.Mutex
	data int
}

func (h *keptHandle) use() {
	h.mu.Lock()
	h.data++
	h.mu.Unlock()
}

// closeAllUnder closes the handles *hs under reg: each is locked for good.
func closeAllUnder(reg sync.Locker, hs *[]*keptHandle) {
	reg.Lock()
	for _, h := range *hs {
		h.mu.Lock() // closed: locked for good
	}
	*hs = nil
	reg.Unlock()
}

// keptHandlesCloseNoCycle runs, in one goroutine (its state away from
// its home slot if away), three rounds of 60 opens, a closeAll, and an
// open under every handle closed so far (past held.MaxProving), and
// asserts that no cycle is reported.
func keptHandlesCloseNoCycle(t *testing.T, away bool, open, closeAll func()) {
	t.Helper()
	runIn := run
	if away {
		runIn = func(f func()) { runAway(t, f) }
	}
	runIn(func() {
		for range 3 {
			for range 60 {
				open()
			}
			closeAll()
			open() // under every handle closed so far
		}
	})
	assert.Empty(t, only(lockorder.KindCycle), "no goroutine but the keeper locks a closed handle")
}

// TestSectionsUnderHandlesKeptForGoodPastTheBoundCloseNoCycle's Cond.Wait
// over a tried lock, on a registry's RLocker: the Wait takes the read hold
// again on a new chain; the RUnlock ends both sections.
func TestAnRLockerCondWaitOverATriedLockUnderKeptHandlesClosesNoCycle(t *testing.T) {
	var reg struct {
		mu    lockorder.RWMutex
		inner lockorder.Mutex
		cond  *lockorder.Cond
		hs    []*keptHandle
	}
	fresh(t)
	reg.cond = lockorder.NewCond(reg.mu.RLocker())
	keptHandlesCloseNoCycle(t, false, func() {
		h := new(keptHandle)
		reg.mu.RLock()
		if !reg.inner.TryLock() {
			panic("inner is free")
		}
		woke := make(chan struct{})
		go func() { // wakes the Wait, whenever it starts
			for {
				reg.cond.Broadcast()
				select {
				case <-woke:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
		reg.cond.Wait()
		close(woke)
		reg.inner.Unlock()
		reg.mu.RUnlock()
		reg.mu.Lock()
		reg.hs = append(reg.hs, h)
		reg.mu.Unlock()
		h.use()
	}, func() { closeAllUnder(&reg.mu, &reg.hs) })
}
