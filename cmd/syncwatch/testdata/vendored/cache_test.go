package vendored_test

import (
	"testing"

	"example.com/vendored"
)

func TestStoreGet(t *testing.T) {
	vendored.Store("a", 1)
	if got := vendored.Get("a"); got != 1 {
		t.Fatalf("Get(a) = %d, want 1", got)
	}
	if got := vendored.Hits(); got != 1 {
		t.Fatalf("Hits() = %d, want 1", got)
	}
}

func TestFlush(t *testing.T) {
	vendored.Flush()
}
