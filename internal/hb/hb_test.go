package hb_test

import (
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/internal/hb"
)

func TestJoinKnowsBoth(t *testing.T) {
	var p atomic.Pointer[hb.Clock]
	a, b := hb.NewG(1, nil), hb.NewG(2, nil)
	ea, eb := a.Epoch(), b.Epoch()
	a.Release(&p)
	b.Release(&p)
	c := p.Load()
	if c.At(1) != ea || c.At(2) != eb || c.At(3) != 0 || c.Len() != 2 {
		t.Fatalf("joined clock: At(1)=%d At(2)=%d At(3)=%d Len=%d; want %d %d 0 2", c.At(1), c.At(2), c.At(3), c.Len(), ea, eb)
	}
	if hb.Join(c, nil) != c || hb.Join(nil, c) != c {
		t.Fatal("joining a clock and one it covers made a new clock")
	}
	var nilClock *hb.Clock
	if nilClock.At(1) != 0 || nilClock.Len() != 0 {
		t.Fatal("the nil clock knows something")
	}
}

func TestJoinIsBounded(t *testing.T) {
	var p atomic.Pointer[hb.Clock]
	for id := int64(1); id <= hb.MaxEntries+5; id++ {
		hb.NewG(id, nil).Release(&p)
	}
	c := p.Load()
	if c.Len() != hb.MaxEntries {
		t.Fatalf("Len = %d, want %d", c.Len(), hb.MaxEntries)
	}
	if c.At(1) != 0 || c.At(hb.MaxEntries+5) == 0 {
		t.Fatal("the bound dropped a newer goroutine, not the oldest")
	}
}

// sightAfter returns a's sighting, released to b, and b's sighting from
// its hold at position i after acquiring it while holding depth locks.
func sightAfter(t *testing.T, a, b *hb.G, depth, i int) (hb.Sight, hb.Sight) {
	t.Helper()
	var p atomic.Pointer[hb.Clock]
	sa := a.Sighting(0)
	a.Release(&p)
	b.Acquire(p.Load(), depth)
	return sa, b.Sighting(i)
}

func TestReleaseThenAcquireOrders(t *testing.T) {
	sa, sb := sightAfter(t, hb.NewG(1, nil), hb.NewG(2, nil), 0, 0)
	if !hb.Ordered(sa, 7, sb, 8) || !hb.Ordered(sb, 7, sa, 8) {
		t.Fatal("a sighting released to another goroutine's later one is not ordered")
	}
}

func TestAHoldTakenBeforeTheAcquireIsNotOrdered(t *testing.T) {
	a, b := hb.NewG(1, nil), hb.NewG(2, nil)
	sa, old := sightAfter(t, a, b, 1, 0)
	if hb.Ordered(sa, 7, old, 8) {
		t.Fatal("an edge from a hold taken before the acquire is ordered after it")
	}
	if newer := b.Sighting(1); !hb.Ordered(sa, 7, newer, 8) {
		t.Fatal("an edge from a hold taken after the acquire is not ordered after it")
	}
	b.Acquire(nil, 0) // holding nothing: no hold is older than what b knows
	if !hb.Ordered(sa, 7, b.Sighting(0), 8) {
		t.Fatal("a hold taken once b held nothing is not ordered after the acquire")
	}
}

func TestOneGoroutineIsNeverOrdered(t *testing.T) {
	g := hb.NewG(1, nil)
	s1 := g.Sighting(0)
	var p atomic.Pointer[hb.Clock]
	g.Release(&p)
	g.Acquire(p.Load(), 0)
	if hb.Ordered(s1, 7, g.Sighting(0), 8) {
		t.Fatal("two sightings of one goroutine are ordered")
	}
	other := hb.NewG(1, p.Load()) // the same goroutine's next record
	if hb.Ordered(s1, 7, other.Sighting(0), 8) {
		t.Fatal("sightings of one goroutine under two records are ordered")
	}
}

func TestASightingAfterTheReleaseIsNotOrdered(t *testing.T) {
	a, b := hb.NewG(1, nil), hb.NewG(2, nil)
	var p atomic.Pointer[hb.Clock]
	first := a.Sighting(0)
	a.Release(&p)
	later := a.Sighting(0) // a new epoch, not released
	b.Acquire(p.Load(), 0)
	sb := b.Sighting(0)
	if hb.Ordered(later, 7, sb, 8) {
		t.Fatal("a sighting after the release is ordered before the acquirer's")
	}
	s := first
	s.Merge(later)
	if hb.Ordered(s, 7, sb, 8) {
		t.Fatal("an edge with a sighting after the release is ordered")
	}
}

// Sightings a goroutine made at an epoch nobody recorded (its chain was
// cached) count: Watch returns its epoch now.
func TestAnUnrecordedEpochIsNotOrdered(t *testing.T) {
	a, b := hb.NewG(1, nil), hb.NewG(2, nil)
	var p atomic.Pointer[hb.Clock]
	sa := a.Sighting(0)
	a.Release(&p)
	if !a.Advance() { // a takes the edge again: cached, not recorded
		t.Fatal("Advance after a release did not advance")
	}
	b.Acquire(p.Load(), 0)
	if hb.Ordered(sa, 7, b.Sighting(0), 8) {
		t.Fatal("ordered, though a may have taken the edge again since")
	}
}

func TestWatchSaltsChainsIntoTheWatchedLocks(t *testing.T) {
	g := hb.NewG(1, nil)
	if g.Salts(7, 70) {
		t.Fatal("an unwatched G salts its keys")
	}
	if w := g.Watch(7); w != g.Epoch() {
		t.Fatalf("Watch = %d, want the epoch now, %d", w, g.Epoch())
	}
	if !g.Salts(7, 70) || !g.Salts(5, 7) || g.Salts(8, 80) {
		t.Fatal("Salts does not name exactly the locks watched, by node or class")
	}
	var p atomic.Pointer[hb.Clock]
	g.Release(&p)
	if !g.Advance() || g.Salt != g.Epoch() {
		t.Fatalf("after a release the salt is %d at epoch %d", g.Salt, g.Epoch())
	}
	if w := g.Watch(7); w == g.Epoch() {
		t.Fatal("a lock's watch moved with the epoch")
	}
	if w := g.Watch(8); w != g.Epoch() {
		t.Fatal("a lock watched later is not watched from the epoch then")
	}
	for node := uint64(100); !g.Salts(1000, 1000); node++ {
		g.Watch(node)
		if node > 200 {
			t.Fatal("watching many locks never salts them all")
		}
	}
}

func TestMergeForgetsPastTheBound(t *testing.T) {
	var s hb.Sight
	if s.Known() || s.Merge(hb.NewG(1, nil).Sighting(0)) || s.Known() {
		t.Fatal("the zero Sight is not unknown for good")
	}
	s = hb.NewG(1, nil).Sighting(0)
	for id := int64(2); id <= hb.MaxSighters; id++ {
		if !s.Merge(hb.NewG(id, nil).Sighting(0)) || !s.Known() {
			t.Fatalf("merging sighter %d: not a change, or forgot", id)
		}
	}
	if !s.Merge(hb.NewG(99, nil).Sighting(0)) || s.Known() {
		t.Fatal("a Sight past MaxSighters is still known")
	}
}

func TestForkKnowsTheStarter(t *testing.T) {
	parent := hb.NewG(1, nil)
	sp := parent.Sighting(0)
	child := hb.NewG(2, parent.Fork())
	if !hb.Ordered(sp, 7, child.Sighting(0), 8) {
		t.Fatal("the starter's sighting is not ordered before the started goroutine's")
	}
	if hb.Ordered(parent.Sighting(0), 7, child.Sighting(0), 8) {
		t.Fatal("the starter's sighting after the start is ordered before the started goroutine's")
	}
}

// A starter that waited for more goroutines than a clock names, all of
// larger ids than its own, still names itself in what it forks: the
// clock drops another's entry, not its own.
func TestForkPastTheBoundKnowsTheStarter(t *testing.T) {
	parent := hb.NewG(1, nil)
	var group atomic.Pointer[hb.Clock]
	for id := int64(2); id <= hb.MaxEntries+5; id++ {
		hb.NewG(id, nil).Release(&group)
	}
	parent.Acquire(group.Load(), 0)
	sp := parent.Sighting(0)
	child := hb.NewG(hb.MaxEntries+6, parent.Fork())
	if !hb.Ordered(sp, 7, child.Sighting(0), 8) {
		t.Fatal("the starter's sighting is not ordered before the started goroutine's")
	}
}

// One goroutine's sightings of an edge may fall on both sides of
// another's: each pair is ordered.
func TestSightingsOnBothSidesOfAnother(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		x, y := hb.NewG(1, nil), hb.NewG(2, nil)
		var toY, toX atomic.Pointer[hb.Clock]
		sx := x.Sighting(0)
		x.Release(&toY)
		y.Acquire(toY.Load(), 0)
		sy := y.Sighting(0)
		y.Release(&toX)
		if concurrent {
			sx.Merge(x.Sighting(0)) // after its release, not knowing y's
		}
		x.Acquire(toX.Load(), 0)
		sx.Merge(x.Sighting(0)) // after y's: x knows y's now
		if got := hb.Ordered(sx, 7, sy, 8); got == concurrent {
			t.Errorf("with a sighting concurrent with y's: %v; Ordered = %v", concurrent, got)
		}
	}
}
