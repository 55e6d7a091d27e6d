package goid_test

import (
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/internal/goid"
)

// TestIDMatchesRuntimeStack guards against a Go release that moves the goid
// field: the fast path must agree with the runtime's own report.
func TestIDMatchesRuntimeStack(t *testing.T) {
	if got, want := goid.ID(), goid.Slow(); got != want || want == 0 {
		t.Fatalf("goid.ID() = %d, runtime.Stack says %d", got, want)
	}
	var wg sync.WaitGroup
	ids := make([]int64, 64)
	for i := range ids {
		wg.Go(func() {
			fast, slow := goid.ID(), goid.Slow()
			if fast != slow || slow == 0 {
				t.Errorf("goroutine %d: goid.ID() = %d, runtime.Stack says %d", i, fast, slow)
			}
			ids[i] = fast
		})
	}
	wg.Wait()
	seen := map[int64]bool{goid.ID(): true}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("goroutine id %d seen twice among live goroutines", id)
		}
		seen[id] = true
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"goroutine 17 [running]:\n":  17,
		"goroutine 1 [chan receive]": 1,
		"goroutin 17 [":              0,
		"goroutine x [":              0,
		"":                           0,
	} {
		if got := goid.Parse([]byte(in)); got != want {
			t.Errorf("Parse(%q) = %d, want %d", in, got, want)
		}
	}
}

func BenchmarkID(b *testing.B) {
	for b.Loop() {
		_ = goid.ID()
	}
}
