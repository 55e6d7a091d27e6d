package waitfor

import (
	"testing"
	"time"
)

// The monitor's looks take a bounded share of the program's time: a look
// that stopped the world for d puts the next off by gatherShare*d, where
// that is longer than the setting.
func TestALookThatCostsMuchPutsTheNextOff(t *testing.T) {
	for _, c := range []struct{ every, cost, want time.Duration }{
		{time.Second, 0, time.Second},
		{time.Second, time.Millisecond, time.Second},
		{time.Second, 3 * time.Second, 60 * time.Second},
		{10 * time.Millisecond, time.Millisecond, 20 * time.Millisecond},
	} {
		if got := dumpGap(c.every, c.cost); got != c.want {
			t.Errorf("dumpGap(%v, %v) = %v, want %v", c.every, c.cost, got, c.want)
		}
	}
}

// gather records what it cost, which canDump weighs.
func TestGatherRecordsItsCost(t *testing.T) {
	gatherCost.Store(0)
	gather(Snapshot(), true)
	if gatherCost.Load() <= 0 {
		t.Fatal("gather recorded no cost")
	}
	last := lastDump.Load()
	defer lastDump.Store(last)
	lastDump.Store(0)
	gatherCost.Store(int64(time.Hour))
	if !canDump(time.Nanosecond) {
		t.Fatal("the first look is always allowed")
	}
	if canDump(time.Nanosecond) {
		t.Fatal("a look an hour long allowed another at once")
	}
	gatherCost.Store(0)
}
