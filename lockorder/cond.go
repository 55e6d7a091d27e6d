package lockorder

import "sync"

// Cond is a condition variable, a rendezvous point for goroutines waiting
// for or announcing an event. It is a drop-in replacement for [sync.Cond]:
// L is held while the condition is checked or changed, Wait, Signal and
// Broadcast have sync's meanings (a Signal or Broadcast synchronizes before
// the return of the Wait it unblocks), and [NewCond] returns one on l. The
// zero value with L set is ready.
//
// A goroutine blocked in Wait is a wait of the wait-for graph, so a
// long-wait report or a barrier's account of a missing rank can say it is
// waiting on this Cond. Any goroutine may Signal, so a Cond wait is never
// part of a deadlock cycle, and a goroutine idle in Wait when the tests end
// is not reported.
//
// A Cond must not be copied after first use.
type Cond struct {
	// L is held while observing or changing the condition.
	L sync.Locker

	mu      sync.Mutex
	waiters []chan struct{} // oldest first
	id      condID          // its name in reports, made on first Wait
}

// NewCond returns a new Cond with Locker l.
func NewCond(l sync.Locker) *Cond { return &Cond{L: l} }

// Wait atomically unlocks c.L and suspends the calling goroutine, then
// locks c.L again before returning. Wait cannot return unless awoken by
// Signal or Broadcast, so, as with sync, it is called in a loop that checks
// the condition.
func (c *Cond) Wait() {
	ch := make(chan struct{})
	c.mu.Lock()
	c.waiters = append(c.waiters, ch)
	c.mu.Unlock()
	c.L.Unlock()
	c.block(ch)
	c.L.Lock()
}

// Signal wakes one goroutine waiting on c, if there is any: the one that
// has waited longest. The caller may hold c.L, but need not.
func (c *Cond) Signal() {
	c.mu.Lock()
	if len(c.waiters) > 0 {
		close(c.waiters[0])
		c.waiters[0] = nil
		c.waiters = c.waiters[1:]
	}
	c.mu.Unlock()
}

// Broadcast wakes every goroutine waiting on c. The caller may hold c.L,
// but need not.
func (c *Cond) Broadcast() {
	c.mu.Lock()
	for _, ch := range c.waiters {
		close(ch)
	}
	c.waiters = nil
	c.mu.Unlock()
}
