package gls_test

import (
	"runtime/debug"
	"testing"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/hb"
)

// The table's size and probe window (gls.go): ids that differ by a
// multiple of tableSize share a home slot and a window.
const (
	tableSize = 1 << 13
	probe     = 8
)

// crowd fills the window of home slot id with busy states of other ids
// (fakes, far from any goroutine's), so that a state made for id goes to
// the overflow: more of them than the window holds, since each takes a
// free or a dropped slot first. It returns them, for unpark.
func crowd(id int64) []int64 {
	var ids []int64
	for k := range int64(probe + 1) {
		f := id + (k+1)*tableSize
		gls.Get(f) // busy: never dropped
		ids = append(ids, f)
	}
	return ids
}

// unpark gives up the states and slots of ids, fakes, with nothing held.
func unpark(ids ...int64) {
	for _, f := range ids {
		gls.Get(f).Rest()
		gls.Release(f)
	}
}

// noTrimsAfterGC keeps collections, which trim, from running during a
// test that sets up the table by hand.
func noTrimsAfterGC(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

// R17, R21: an idle state in the overflow that keeps a clock is dropped
// to a remnant its goroutine gets back, as in the table. Lost, its
// goroutine's next release would publish nothing, and the edges it took
// before would look unordered: a report the lost state made.
func TestAnOverflowStateDroppedKeepsItsClock(t *testing.T) {
	noTrimsAfterGC(t)
	const id = 1<<40 + 123
	fakes := crowd(id)
	defer unpark(fakes...)
	remnants := gls.Remnants()

	g := gls.Get(id)
	clock := hb.NewG(id, nil)
	g.HB = clock
	g.Rest()
	gls.Trim() // the overflow's idle states are dropped at every trim
	if gls.Find(id) == g {
		t.Fatal("the trim kept an idle state")
	}
	if s, r := gls.Own(id); s != nil || !r.Clocked() {
		t.Fatalf("after the drop: state %v, remnant clocked %v; want none, true", s, r.Clocked())
	}
	if n := gls.Remnants(); n != remnants+1 {
		t.Fatalf("%d remnants in the overflow, want %d: the state was not in the overflow", n, remnants+1)
	}
	if g2 := gls.Get(id); g2.HB != clock {
		t.Fatal("the revived state lost its clock")
	}
	unpark(id)
	if n := gls.Remnants(); n != remnants {
		t.Fatalf("%d remnants after the goroutine revived its own, want %d", n, remnants)
	}
}

// R17, R21: a goroutine that needs a slot may take one whose dropped
// state's remnant keeps a clock (its window holds nothing else); the
// remnant then moves to the overflow, where its goroutine finds it.
func TestATakenSlotsClockMovesToTheOverflow(t *testing.T) {
	noTrimsAfterGC(t)
	const base = 1<<40 + 456
	var ids []int64
	clocks := map[int64]*hb.G{}
	for k := range int64(probe) {
		id := base + k*tableSize
		g := gls.Get(id)
		g.HB = hb.NewG(id, nil)
		clocks[id] = g.HB
		g.Rest()
		ids = append(ids, id)
	}
	// Enough other states for the trim to drop the table's idle ones
	// (trimFloor).
	var others []int64
	for k := range int64(100) {
		f := base + 1 + 16*k
		gls.Get(f)
		others = append(others, f)
	}
	defer unpark(others...)
	gls.Trim()
	for _, id := range ids {
		if !gls.Dropped(id).Clocked() {
			t.Fatalf("goroutine %d: no remnant with its clock after the trim", id)
		}
	}
	remnants := gls.Remnants()

	// A goroutine of the same window: every slot there holds a remnant
	// that keeps a clock, so it takes one.
	newcomer := int64(base + probe*tableSize)
	gls.Get(newcomer)
	defer unpark(newcomer)
	for _, id := range ids {
		if !gls.Dropped(id).Clocked() {
			t.Fatalf("goroutine %d lost its clock with its slot", id)
		}
	}
	if n := gls.Remnants(); n != remnants+1 {
		t.Fatalf("%d remnants in the overflow, want %d: no clock was moved", n, remnants+1)
	}
	for _, id := range ids {
		if g := gls.Get(id); g.HB != clocks[id] {
			t.Fatalf("goroutine %d revived a state without its clock", id)
		}
	}
	unpark(ids...)
}
