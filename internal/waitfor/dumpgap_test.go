package waitfor

import (
	"sync"
	"testing"
	"time"
)

// The monitor's looks take a bounded share of the program's time: a look
// expected to stop the world for d comes gatherShare*d after the last,
// where that is longer than the setting, and never more than maxGap.
func TestALookThatCostsMuchPutsTheNextOff(t *testing.T) {
	for _, c := range []struct{ every, cost, want time.Duration }{
		{time.Second, 0, time.Second},
		{time.Second, time.Millisecond, time.Second},
		{time.Second, 2 * time.Second, 40 * time.Second},
		{time.Second, time.Hour, maxGap},
		{10 * time.Millisecond, time.Millisecond, 20 * time.Millisecond},
		{2 * maxGap, time.Hour, 2 * maxGap},
	} {
		if got := dumpGap(c.every, c.cost); got != c.want {
			t.Errorf("dumpGap(%v, %v) = %v, want %v", c.every, c.cost, got, c.want)
		}
	}
}

// The cost per goroutine is learnt from dumps of many goroutines only
// (a small one is mostly fixed cost), goes down at once and up slowly (a
// dump that grew its buffer, or ran on a busy machine, costs more than
// the next): it errs towards looking too early, not too late.
func TestTheCostPerGoroutineIsLearntFromLargeDumpsErringLow(t *testing.T) {
	per := dumpPerG.Load()
	defer dumpPerG.Store(per)

	dumpPerG.Store(0)
	learnDumpCost(3, int64(10*time.Millisecond)) // 3 ms a goroutine, of a fixed cost
	if got := dumpPerG.Load(); got != 0 {
		t.Fatalf("a dump of 3 goroutines taught %v a goroutine", time.Duration(got))
	}
	if got := lookCost(10_000); got != 10_000*defaultPerG {
		t.Errorf("lookCost(10000) = %v before any large dump, want %v", got, 10_000*defaultPerG)
	}

	learnDumpCost(10_000, int64(10_000*69*time.Microsecond)) // a first dump that grew its buffer: 69 µs each
	if got := time.Duration(dumpPerG.Load()); got != defaultPerG+(69*time.Microsecond-defaultPerG)/8 {
		t.Errorf("after a costly dump: %v a goroutine, want an eighth of the way up from %v", got, defaultPerG)
	}
	learnDumpCost(10_000, int64(10_000*time.Microsecond))
	if got := time.Duration(dumpPerG.Load()); got != time.Microsecond {
		t.Errorf("after a cheap dump: %v a goroutine, want 1µs at once", got)
	}
}

// A program whose look would take hours is not looked into at once, the
// first look included, nor more than maxGap after the last; a cheap first
// look comes at once.
func TestTheFirstLookWeighsItsCost(t *testing.T) {
	per, last := dumpPerG.Load(), lastDump.Load()
	defer func() { dumpPerG.Store(per); lastDump.Store(last) }()

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

// A dump that outgrew its buffer, which stopped the world once per
// doubling, teaches nothing; the next, in one pass, does.
func TestADumpThatGrewTeachesNothing(t *testing.T) {
	per := dumpPerG.Load()
	defer dumpPerG.Store(per)
	Fresh() // the buffer fits the few goroutines there are
	stop := make(chan struct{})
	var gone sync.WaitGroup
	defer func() { close(stop); gone.Wait() }() // the next test's dump is small again
	for range 4 * minLearn {
		gone.Go(func() { <-stop })
	}
	dumpPerG.Store(0)
	if d := Fresh(); len(d.index) < 4*minLearn {
		t.Fatalf("the dump shows %d goroutines", len(d.index))
	}
	if got := dumpPerG.Load(); got != 0 {
		t.Fatalf("a dump that grew its buffer taught %v a goroutine", time.Duration(got))
	}
	Fresh()
	if dumpPerG.Load() == 0 {
		t.Fatal("a dump in one pass taught nothing")
	}
}
