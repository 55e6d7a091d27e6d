package lockorder

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

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
// A Cond must not be copied after first use: as with sync, Wait, Signal
// and Broadcast on a copy panic, and go vet's copylocks check reports the
// copy where it is made.
type Cond struct {
	noCopy noCopy

	// L is held while observing or changing the condition.
	L sync.Locker

	checker copyChecker
	mu      sync.Mutex
	woken   sync.Cond     // on mu: a waiter's turn may have come
	waiters []*condWaiter // oldest first
	id      condID        // its name in reports, made on first Wait
}

// A condWaiter is one call of Wait, signalled when its turn has come. The
// waiters wait on a sync.Cond of the Cond's own, never on a channel: a
// channel made by a goroutine in a testing/synctest bubble could not be
// closed from outside it, and sync.Cond's waits are durable in a bubble
// as the Cond they replace is.
type condWaiter struct{ signalled bool }

// NewCond returns a new Cond with Locker l.
func NewCond(l sync.Locker) *Cond { return &Cond{L: l} }

// Wait atomically unlocks c.L and suspends the calling goroutine, then
// locks c.L again before returning. Wait cannot return unless awoken by
// Signal or Broadcast, so, as with sync, it is called in a loop that checks
// the condition.
func (c *Cond) Wait() {
	c.checker.check()
	w := new(condWaiter)
	c.mu.Lock()
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	c.unlockL()
	c.block(w)
	c.relockL()
}

// Signal wakes one goroutine waiting on c, if there is any: the one that
// has waited longest. The caller may hold c.L, but need not.
func (c *Cond) Signal() {
	c.checker.check()
	c.mu.Lock()
	if len(c.waiters) > 0 {
		c.waiters[0].signalled = true
		c.waiters[0] = nil
		c.waiters = c.waiters[1:]
		c.wake()
	}
	c.mu.Unlock()
}

// Broadcast wakes every goroutine waiting on c. The caller may hold c.L,
// but need not.
func (c *Cond) Broadcast() {
	c.checker.check()
	c.mu.Lock()
	for _, w := range c.waiters {
		w.signalled = true
	}
	if len(c.waiters) > 0 {
		c.waiters = nil
		c.wake()
	}
	c.mu.Unlock()
}

// copyChecker holds its own address from a Cond's first use on, so that
// a use of a copy, whose checker holds another address, panics, as
// sync.Cond's does.
// wake wakes the goroutines waiting in await, for each to see whether its
// turn has come. Called with c.mu held.
func (c *Cond) wake() {
	c.woken.L = &c.mu
	c.woken.Broadcast()
}

// await blocks until w is signalled.
func (c *Cond) await(w *condWaiter) {
	c.mu.Lock()
	c.woken.L = &c.mu
	for !w.signalled {
		c.woken.Wait()
	}
	c.mu.Unlock()
}

type copyChecker struct{ self atomic.Uintptr }

// check panics if c is not where it was first used.
func (c *copyChecker) check() {
	me := uintptr(unsafe.Pointer(c))
	if c.self.Load() != me && !c.self.CompareAndSwap(0, me) && c.self.Load() != me {
		panic("lockorder: Cond is copied")
	}
}

// noCopy makes go vet's copylocks check report copies of the struct that
// holds it; see sync's noCopy.
type noCopy struct{}

// Lock is a no-op used by go vet's copylocks check.
func (*noCopy) Lock() {}

// Unlock is a no-op used by go vet's copylocks check.
func (*noCopy) Unlock() {}
