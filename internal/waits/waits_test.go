package waits_test

import (
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/waits"
)

func TestBeginLookupEnd(t *testing.T) {
	if _, ok := waits.Lookup(42); ok {
		t.Fatal("unknown goroutine has a wait")
	}
	w := waits.Wait{Goroutine: 42, Kind: "lock", Object: "aggregation_lock", Holder: 7, Since: time.Now()}
	waits.Begin(w)
	waits.Begin(waits.Wait{Goroutine: 43, Kind: "barrier", Object: "allreduce"})
	got, ok := waits.Lookup(42)
	if !ok || got.Object != "aggregation_lock" || got.Holder != 7 {
		t.Fatalf("Lookup = %+v, %v", got, ok)
	}
	if n := len(waits.All()); n != 2 {
		t.Fatalf("All has %d waits, want 2", n)
	}
	waits.End(42)
	waits.End(43)
	if _, ok := waits.Lookup(42); ok || len(waits.All()) != 0 {
		t.Fatal("End did not remove the wait")
	}
}
