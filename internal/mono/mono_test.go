package mono_test

import (
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/mono"
)

func TestReadingsAdvanceAndConvert(t *testing.T) {
	before := time.Now()
	a := mono.Now()
	time.Sleep(2 * time.Millisecond)
	b := mono.Now()
	after := time.Now()
	if b-a < int64(2*time.Millisecond) {
		t.Fatalf("readings %d and %d are less than the 2ms slept apart", a, b)
	}
	if d := mono.Since(a); d < 2*time.Millisecond {
		t.Fatalf("Since = %v, want at least 2ms", d)
	}
	// Time maps readings onto the wall clock, in order, within the interval
	// they were taken in.
	ta, tb := mono.Time(a), mono.Time(b)
	if ta.Before(before.Add(-time.Millisecond)) || tb.After(after.Add(time.Millisecond)) || !ta.Before(tb) {
		t.Fatalf("Time(%d) = %v, Time(%d) = %v, not within [%v, %v]", a, ta, b, tb, before, after)
	}
}
