// Package counter counts under a lock, in one order everywhere.
package counter

import (
	s "sync"
)

// Counter is a count behind an embedded mutex.
type Counter struct {
	s.Mutex
	n    int
	once s.Once
	cond *s.Cond
}

// Add adds one.
func (c *Counter) Add() {
	c.once.Do(func() { c.cond = s.NewCond(&c.Mutex) })
	c.Lock()
	c.n++
	c.cond.Broadcast()
	c.Unlock()
}

// All runs f n times at once and waits for them.
func All(n int, f func()) {
	var wg s.WaitGroup
	for range n {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
}
