package cacheapp_test

import (
	"testing"

	"example.com/cacheapp"
)

func TestAddCount(t *testing.T) {
	cacheapp.Add("a")
	if n := cacheapp.Count(); n != 1 {
		t.Fatalf("Count() = %d, want 1", n)
	}
}
