package mono_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/syncwatch/syncwatch/internal/mono"
)

func TestReadingsAdvance(t *testing.T) {
	a := mono.Now()
	time.Sleep(2 * time.Millisecond)
	b := mono.Now()
	if b-a < int64(2*time.Millisecond) {
		t.Fatalf("readings %d and %d are less than the 2ms slept apart", a, b)
	}
	if d := mono.Since(a); d < 2*time.Millisecond {
		t.Fatalf("Since = %v, want at least 2ms", d)
	}
}

// TestRealTimeInASynctestBubble checks that readings in a testing/synctest
// bubble follow real time, not the bubble's fake clock, which jumps ten
// seconds at once here: a wait timed with them does not look long.
func TestRealTimeInASynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := mono.Now()
		time.Sleep(10 * time.Second) // fake: returns at once
		if d := mono.Since(a); d >= 10*time.Second {
			t.Fatalf("Since = %v across a fake sleep of 10s: the reading follows the bubble's clock", d)
		}
	})
}
