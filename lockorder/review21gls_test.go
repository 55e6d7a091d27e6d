//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// held.Remnant.Remembers now says true for a clock alone (hb or inherit),
// and gls.lose marks every goroutine whose remembering remnant is lost
// "forgetful" (a bit per hash of its id): a forgetful goroutine's Do on a
// done Once records no edge at all (doneOnce). So a goroutine that merely
// recorded one order edge, and whose idle state was dropped from the
// overflow by a trim after a GC, no longer reports a Do under a lock the
// Once's function takes. Before R21 its remnant remembered nothing (it saw
// no Once) and it was not marked. Deadlock: g holds l and calls Do while
// the runner, inside f, waits for l.
//
// The same happens without any pressure over time: every lost state of a
// goroutine that recorded an edge sets one of the 2^20 bits, so that a
// goroutine-per-request program ends with nearly every goroutine
// forgetful.
func reviewForgetful(t *testing.T, recordEdge bool) {
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
	go func() {
		defer close(done)
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
	// Trims run after collections: g's idle state is dropped.
	for range 20 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	close(step)
	<-done
	assert.Len(t, only(lockorder.KindCycle), 1, "l -> once -> l: g may hold l while f waits for it")
}

func TestReviewAClockMakesALostGoroutineForgetful(t *testing.T) { reviewForgetful(t, true) }
func TestReviewCtlNoClockNotForgetful(t *testing.T)             { reviewForgetful(t, false) }
