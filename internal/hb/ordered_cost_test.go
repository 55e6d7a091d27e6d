package hb_test

import (
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/internal/hb"
)

// poolSights returns the Sight of an edge taken by a pool of n workers,
// waited for, and that of the inverse edge taken by a second pool of n
// the waiter then started: every pair is ordered (R21).
func poolSights(n int) (first, second hb.Sight) {
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
	}
	return first, second
}

// Ordered is called under the engine's lock at each sighting that changes
// an edge's Sight, for each edge a search meets: with pools as large as
// R21 now keeps (hb.MaxSighters), it must stay linear in the goroutines
// in allocations, not allocate for each pair of them.
func TestOrderedOfTwoFullPoolsAllocatesOnceAGoroutine(t *testing.T) {
	first, second := poolSights(hb.MaxSighters)
	if !hb.Ordered(first, 7, second, 8) {
		t.Fatal("two pools, the second started after the first was waited for, are not ordered")
	}
	allocs := testing.AllocsPerRun(20, func() { hb.Ordered(first, 7, second, 8) })
	if limit := float64(4 * 2 * hb.MaxSighters); allocs > limit {
		t.Errorf("Ordered of two pools of %d: %.0f allocations a call, want at most %.0f (the spans of each goroutine, once a pass)",
			hb.MaxSighters, allocs, limit)
	}
}
