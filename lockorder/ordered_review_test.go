//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// R21's regression tests from its review: real deadlocks it must still
// report, and shapes it must pass. Each test states its schedule.

// provedReads caches the chains whose edges from read holds it has just
// added under the goroutine's *current* salt (cacheKey advances the epoch
// first), though the chain's edges from write holds were recorded at an
// earlier epoch. A watched goroutine's first sighting at that new epoch
// then hits the cache and is not recorded.
//
// x: w, r(read), a (w->a recorded at epoch e1; r->a waits), releases w,
// Done. The waiter takes a then w: held back (x's w->a is before it) and
// x is watched at e1. x's RUnlock proves r->a and caches chain (w,r,a)
// under the salt of its new epoch e2; x's second w, r, a is then a cache
// hit. Deadlock: the waiter holds a and waits for w while x (second
// round, after its Done, concurrent with the waiter) holds w and waits
// for a.
func TestProvedReadEdgesAreCachedForTheirEpoch(t *testing.T) {
	fresh(t)
	w, a := lockorder.NewMutex("rv21-pr-w"), lockorder.NewMutex("rv21-pr-a")
	r := lockorder.NewRWMutex("rv21-pr-r")
	var wg lockorder.WaitGroup
	step, done := make(chan struct{}), make(chan struct{})
	wg.Add(1)
	go func() {
		defer close(done)
		w.Lock()
		r.RLock()
		a.Lock()
		a.Unlock()
		w.Unlock()
		wg.Done()
		<-step
		r.RUnlock()
		w.Lock()
		r.RLock()
		a.Lock()
		a.Unlock()
		r.RUnlock()
		w.Unlock()
	}()
	wg.Wait()
	lockAB(a, w)
	require.Empty(t, only(lockorder.KindCycle), "x's first w->a is before the waiter's a->w")
	close(step)
	<-done
	assert.Len(t, only(lockorder.KindCycle), 1, "x's second w->a is concurrent with the waiter's a->w")
}

// prepareNested skips a chain whose edges from read holds wait on the
// goroutine (gs.Waiting, keyed by the unsalted chain key), though the
// chain's edges from write holds were recorded at an earlier epoch: a
// watched goroutine's sighting at a new epoch, under a read hold it kept,
// is not recorded.
//
// x holds r for reading throughout; it takes w then a (w->a recorded at
// e1, r->a waits), Done. The waiter takes a then w: held back, x watched
// at e1. x takes w then a again at e2, still holding r: chain (r,w,a)
// misses the cache (salted) but is "waiting", so w->a at e2 is not
// recorded. Deadlock: the waiter holds a and waits for w while x's second
// round holds w and waits for a. (With r a Mutex it is reported.)
func TestAWaitingReadChainAtANewEpochIsRecorded(t *testing.T) {
	fresh(t)
	w, a := lockorder.NewMutex("rv21-wt-w"), lockorder.NewMutex("rv21-wt-a")
	r := lockorder.NewRWMutex("rv21-wt-r")
	var wg lockorder.WaitGroup
	step, done := make(chan struct{}), make(chan struct{})
	wg.Add(1)
	go func() {
		defer close(done)
		r.RLock()
		w.Lock()
		a.Lock()
		a.Unlock()
		w.Unlock()
		wg.Done()
		<-step
		w.Lock()
		a.Lock()
		a.Unlock()
		w.Unlock()
		r.RUnlock()
	}()
	wg.Wait()
	lockAB(a, w)
	require.Empty(t, only(lockorder.KindCycle), "x's first w->a is before the waiter's a->w")
	close(step)
	<-done
	assert.Len(t, only(lockorder.KindCycle), 1, "x's second w->a is concurrent with the waiter's a->w")
}

// Precision: the shape R21 is for, in a loop. Each round starts workers
// with WaitGroup.Go that take a then b, waits for them, and takes b then
// a. Every sighting of a->b is ordered with every sighting of b->a
// (round 1's workers before the first b->a, round 2's after it: they
// inherit the caller's clock), yet the second round is reported: before
// asks that all of a->b's sightings be on one side of all of b->a's. A
// pairwise check (each goroutine of one edge ordered before or after each
// goroutine of the other, with the same Watch bound) is as sound: a
// deadlock needs one pending attempt of each edge at once.
func TestPhasesInALoopAreOrdered(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("rv21-loop-a"), lockorder.NewMutex("rv21-loop-b")
	var wg lockorder.WaitGroup
	for round := range 2 {
		for range 3 {
			wg.Go(func() { lockAB(a, b) })
		}
		wg.Wait()
		lockAB(b, a)
		assert.Empty(t, only(lockorder.KindCycle), "round %d", round)
	}
}

// Precision: one persistent worker across two phases. The worker takes a
// then b, Done; the main goroutine waits, takes b then a, and releases
// the worker through a second WaitGroup (start.Done / start.Wait); the
// worker takes a then b again. Each of the worker's sightings is ordered
// with the main goroutine's (the first before, the second after), but the
// edge keeps only the worker's first clock (taken before the main's b->a)
// and its last epoch (after it): reported. A pool of workers fed phase by
// phase has this shape.
func TestAPersistentWorkerAcrossPhasesIsOrdered(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("rv21-pw-a"), lockorder.NewMutex("rv21-pw-b")
	var wg, start, wg2 lockorder.WaitGroup
	wg.Add(1)
	start.Add(1)
	wg2.Add(1)
	go func() {
		lockAB(a, b)
		wg.Done()
		start.Wait()
		lockAB(a, b)
		wg2.Done()
	}()
	wg.Wait()
	lockAB(b, a)
	start.Done()
	wg2.Wait()
	assert.Empty(t, only(lockorder.KindCycle))
}
