//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Precision (R21): a pool of workers takes a then b; once every one of
// them has been waited for, the inverse order is taken: by the goroutine
// that waited, or by a second pool it starts with WaitGroup.Go. Pools
// from hb.MaxSighters' old bound of 15 up to the one R21 now gives them
// (hb.MaxSighters, less the waiter's own entry in a clock): the cycle
// is ordered and is not reported. A worker that nobody waited for
// still makes it one.
func TestAPoolWaitedForOrdersTheInverseTakenAfter(t *testing.T) {
	starts := []struct {
		name  string
		start func(wg *lockorder.WaitGroup, f func())
	}{
		{"WaitGroup.Go", func(wg *lockorder.WaitGroup, f func()) { wg.Go(f) }},
		{"go and Done", func(wg *lockorder.WaitGroup, f func()) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f()
			}()
		}},
	}
	inverses := []struct {
		name    string
		inverse func(wg *lockorder.WaitGroup, n int, a, b *lockorder.Mutex)
	}{
		{"by the waiter", func(_ *lockorder.WaitGroup, _ int, a, b *lockorder.Mutex) { lockAB(b, a) }},
		{"by a second pool", func(wg *lockorder.WaitGroup, n int, a, b *lockorder.Mutex) {
			for range n {
				wg.Go(func() { lockAB(b, a) })
			}
			wg.Wait()
		}},
	}
	for _, n := range []int{16, 40, 100, lockorder.MaxPool} {
		for _, s := range starts {
			for _, inv := range inverses {
				for _, stray := range []bool{false, true} {
					name := fmt.Sprintf("%d workers/%s/%s/stray=%v", n, s.name, inv.name, stray)
					t.Run(name, func(t *testing.T) {
						fresh(t)
						run(func() {
							a := lockorder.NewMutex("r21-pool-a")
							b := lockorder.NewMutex("r21-pool-b")
							var wg lockorder.WaitGroup
							workers := n
							if stray {
								workers-- // n goroutines take a then b in all
							}
							for range workers {
								s.start(&wg, func() { lockAB(a, b) })
							}
							wg.Wait()
							if stray {
								run(func() { lockAB(a, b) }) // not waited for with wg
							}
							inv.inverse(&wg, n, a, b)
						})
						if stray {
							assert.Len(t, only(lockorder.KindCycle), 1)
						} else {
							assert.Empty(t, only(lockorder.KindCycle))
						}
					})
				}
			}
		}
	}
}

// Where R21's bounds lie: a pool of MaxPool is ordered, past it or with a
// sighting nothing orders, reported.

// A full pool of which one worker takes a then b after its Done: that
// sighting is not before the waiter's inverse.
func TestAFullPoolWithASightingAfterDoneIsACycle(t *testing.T) {
	fresh(t)
	run(func() {
		a := lockorder.NewMutex("rv-after-a")
		b := lockorder.NewMutex("rv-after-b")
		var wg lockorder.WaitGroup
		for range lockorder.MaxPool - 1 {
			wg.Go(func() { lockAB(a, b) })
		}
		late := make(chan struct{})
		wg.Add(1)
		go func() {
			defer close(late)
			wg.Done()
			lockAB(a, b)
		}()
		wg.Wait()
		<-late // a channel: no order R21 sees
		lockAB(b, a)
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A pool of MaxPool workers waited for orders the inverse; one of
// MaxPool+1 leaves the edge knowing nothing (its chain is everyone's):
// reported.
func TestAPoolPastTheBoundIsACycle(t *testing.T) {
	for _, n := range []int{lockorder.MaxPool, lockorder.MaxPool + 1} {
		fresh(t)
		run(func() {
			a := lockorder.NewMutex("rv-past-a")
			b := lockorder.NewMutex("rv-past-b")
			var wg lockorder.WaitGroup
			for range n {
				wg.Go(func() { lockAB(a, b) })
			}
			wg.Wait()
			lockAB(b, a)
		})
		if n > lockorder.MaxPool {
			assert.Len(t, only(lockorder.KindCycle), 1, "n=%d", n)
		} else {
			assert.Empty(t, only(lockorder.KindCycle), "n=%d", n)
		}
	}
}

// MaxPool workers waited for take a then b; the waiter takes b then a
// (held back). Then one goroutine nobody waits for takes a then b: the
// owner of the chain and the sighter of the edge past the bound:
// reported.
func TestTheSighterPastTheBoundAfterTheInverseIsACycle(t *testing.T) {
	fresh(t)
	a := lockorder.NewMutex("rv-64th-a")
	b := lockorder.NewMutex("rv-64th-b")
	run(func() {
		var wg lockorder.WaitGroup
		for range lockorder.MaxPool {
			wg.Go(func() { lockAB(a, b) })
		}
		wg.Wait()
		lockAB(b, a)
	})
	assert.Empty(t, only(lockorder.KindCycle))
	run(func() { lockAB(a, b) })
	assert.Len(t, only(lockorder.KindCycle), 1)
	// And past it, more of them through the cached (Many) chain.
	for range 3 {
		run(func() { lockAB(a, b) })
	}
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// The waiter itself took a then b too: one goroutine on both sides.
func TestAFullPoolAndTheWaiterOnBothSidesIsACycle(t *testing.T) {
	fresh(t)
	run(func() {
		a := lockorder.NewMutex("rv-both-a")
		b := lockorder.NewMutex("rv-both-b")
		var wg lockorder.WaitGroup
		for range lockorder.MaxPool - 1 {
			wg.Go(func() { lockAB(a, b) })
		}
		wg.Wait()
		lockAB(a, b)
		lockAB(b, a)
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A goroutine that waits for pool after pool, 240 goroutines in 24
// rounds, forks each pool from what it knows: round after round, each
// pool's order is before the inverse the waiter takes, and the waiter's
// before the next pool's. Nothing is reported. (Past hb.MaxEntries
// goroutines in all, the waiter's clock forgets the first pools; past 32
// rounds its sightings of the inverse are merged: docs/RULES.md R21.)
func TestRoundsOfPoolsOrderTheInverseTakenBetweenThem(t *testing.T) {
	fresh(t)
	run(func() {
		a := lockorder.NewMutex("r21-rounds-a")
		b := lockorder.NewMutex("r21-rounds-b")
		for range 24 {
			var wg lockorder.WaitGroup
			for range 10 {
				wg.Go(func() { lockAB(a, b) })
			}
			wg.Wait()
			lockAB(b, a)
		}
	})
	assert.Empty(t, only(lockorder.KindCycle))
}
