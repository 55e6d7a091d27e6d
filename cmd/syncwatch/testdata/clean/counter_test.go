package counter_test

import (
	. "sync"
	"testing"

	counter "example.com/clean"
)

func TestAdd(t *testing.T) {
	var c counter.Counter
	counter.All(4, c.Add)
	var mu RWMutex
	mu.RLock()
	defer mu.RUnlock()
	var l Locker = mu.RLocker()
	_ = l
}

func TestCgoAndGenerated(t *testing.T) {
	var r counter.Registry
	r.Add("x")
	if counter.CgoEnabled && counter.Twice(2) != 4 {
		t.Fatal("Twice")
	}
}
