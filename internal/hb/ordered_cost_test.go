package hb_test

import (
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/internal/hb"
)

// poolSights returns the Sight of an edge taken by a pool of n workers,
// waited for, and that of the inverse edge taken by a second pool of n
// the waiter then started: every pair is ordered (R21). If learn is set,
// each worker of the second pool then waits for a goroutine of its own
// and sights the inverse edge again, knowing more than its fork.
func poolSights(n int, learn bool) (first, second hb.Sight) {
	waiter := hb.NewG(1, nil)
	var group atomic.Pointer[hb.Clock]
	fork := waiter.Fork()
	for i := range n {
		w := hb.NewG(int64(2+i), fork)
		if i == 0 {
			first = w.Sighting(0)
		} else {
			first.Merge(w.Sighting(0))
		}
		w.Release(&group)
	}
	waiter.Acquire(group.Load(), 0)
	fork = waiter.Fork()
	for i := range n {
		w := hb.NewG(int64(2+n+i), fork)
		if i == 0 {
			second = w.Sighting(0)
		} else {
			second.Merge(w.Sighting(0))
		}
		if learn {
			var own atomic.Pointer[hb.Clock]
			hb.NewG(int64(2+2*n+i), w.Fork()).Release(&own)
			w.Acquire(own.Load(), 0)
			second.Merge(w.Sighting(0))
		}
	}
	return first, second
}

// Ordered is called under the engine's lock at each sighting that changes
// an edge's Sight, for each edge a search meets: with pools as large as
// R21 now keeps (hb.MaxSighters), it must stay linear in the goroutines
// in allocations, not allocate for each pair of them.
func TestOrderedOfTwoFullPoolsAllocatesOnceAGoroutine(t *testing.T) {
	first, second := poolSights(hb.MaxSighters, false)
	if !hb.Ordered(first, 7, second, 8) {
		t.Fatal("two pools, the second started after the first was waited for, are not ordered")
	}
	allocs := testing.AllocsPerRun(20, func() { hb.Ordered(first, 7, second, 8) })
	if limit := float64(4 * 2 * hb.MaxSighters); allocs > limit {
		t.Errorf("Ordered of two pools of %d: %.0f allocations a call, want at most %.0f (the spans of each goroutine, once a pass)",
			hb.MaxSighters, allocs, limit)
	}
}

// A second pool whose workers each learn something of their own before
// sighting the edge again (a group of their own waited for): their
// clocks differ, but each extends the one the waiter forked them from.
// Ordered finds the pools ordered by what that one clock knows, without
// comparing the goroutines pair by pair: a pool of 255 sighting a
// held-back edge anew searched it at 7 ms an acquisition.
func TestOrderedOfAPoolThatLearntMoreIsLinear(t *testing.T) {
	first, second := poolSights(hb.MaxSighters, true)
	before := hb.Compared()
	if !hb.Ordered(first, 7, second, 8) || !hb.Ordered(second, 8, first, 7) {
		t.Fatal("the pools are not ordered")
	}
	if n := hb.Compared() - before; n != 0 {
		t.Errorf("Ordered compared %d pairs of goroutines one by one, want none", n)
	}
}
