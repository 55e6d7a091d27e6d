package waitfor

import (
	"testing"
	"time"
)

// The monitor's looks take a bounded share of the program's time: a look
// expected to stop the world for d comes gatherShare*d after the last,
// where that is longer than the setting.
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

// A dump records what it cost per goroutine, which canDump weighs, the
// first look included: a program whose look would take an hour is not
// looked into at once.
func TestADumpRecordsItsCost(t *testing.T) {
	per, last := dumpPerG.Load(), lastDump.Load()
	defer func() { dumpPerG.Store(per); lastDump.Store(last) }()
	dumpPerG.Store(0)
	Fresh()
	if dumpPerG.Load() <= 0 {
		t.Fatal("the dump recorded no cost")
	}
	if got := lookCost(1000); got != 1000*time.Duration(dumpPerG.Load()) {
		t.Errorf("lookCost(1000) = %v, want 1000 times the cost per goroutine", got)
	}

	lastDump.Store(0)
	dumpPerG.Store(int64(time.Hour))
	if canDump(time.Second) {
		t.Fatal("a look of hours allowed at once")
	}
	dumpPerG.Store(1)
	lastDump.Store(0)
	if !canDump(time.Second) {
		t.Fatal("the first cheap look is not allowed at once")
	}
}
