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
