package mono_test

import (
	"testing"
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
