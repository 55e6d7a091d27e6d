//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/lockorder"
)

// A goroutine whose idle state is dropped by a trim after a GC, with no
// remnant it gets back, is marked forgetful only if the state remembered
// a Once seen done (held.Remnant.Forgets): a forgetful goroutine's Do on
// a done Once records no edge (doneOnce), so marking every goroutine that
// merely had a clock (R21) would hide a Do under a lock the Once's
// function takes (l -> once -> l). With recordEdge the goroutine records
// an edge, and so has a clock, before its state is dropped: its remnant
// then stays in the overflow for it (R17), and it is not forgetful
// either.
func lostStateForgetful(t *testing.T, recordEdge bool) {
	fresh(t)
	l := lockorder.NewMutex("rv21-fg-l")
	x, y := lockorder.NewMutex("rv21-fg-x"), lockorder.NewMutex("rv21-fg-y")
	var once lockorder.Once
	run(func() { once.Do(func() { l.Lock(); l.Unlock() }) }) // once -> l

	// Fill the goroutine state table (8192 slots), so that g's state
	// goes to the overflow.
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	for range 12000 {
		go func() {
			fill := lockorder.NewMutex("rv21-fg-fill")
			fill.Lock() // held: a busy state is never dropped
			started <- struct{}{}
			<-release
			fill.Unlock()
		}()
	}
	for range 12000 {
		<-started
	}

	step, done := make(chan struct{}), make(chan struct{})
	ready := make(chan struct{})
	var gid int64
	go func() {
		defer close(done)
		gid = goid.ID()
		if recordEdge {
			lockAB(x, y) // g gets an R21 clock
		} else {
			x.Lock()
			x.Unlock()
		}
		close(ready)
		<-step
		l.Lock()
		once.Do(func() {}) // done: would have waited for f, which takes l
		l.Unlock()
	}()
	<-ready
	// Trims run after collections: g's idle state, in the overflow, is
	// dropped at the first.
	if !collectUntil(func() bool { return gls.Find(gid) == nil }) {
		// g's state took a slot of its own (an earlier test's goroutines
		// left room), which is never dropped while g lives: what follows
		// still holds, on a state never lost.
		t.Log("g's idle state was not dropped")
	}
	close(step)
	<-done
	assert.Len(t, only(lockorder.KindCycle), 1, "l -> once -> l: g may hold l while f waits for it")
}

func TestALostClockDoesNotMakeAGoroutineForgetful(t *testing.T) { lostStateForgetful(t, true) }
func TestALostStateWithNoClockIsNotForgetful(t *testing.T)      { lostStateForgetful(t, false) }
