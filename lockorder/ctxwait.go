package lockorder

import (
	"context"
	"slices"
	"sync"
)

// lockWithContext acquires lk, or gives up when ctx is done, and reports
// whether it acquired. A lock that gives up is left as it was.
//
// A lock whose wait can be given up (a cancelLocker, RWMutex's read side)
// is waited for directly. A sync lock cannot be waited for with a
// deadline, so a helper goroutine waits in lk.Lock instead, which keeps the
// wait's place in sync's fair queue. If the caller gives up first, the
// helper stays queued, and when it gets the lock it releases it at once
// (unlock), so an abandoned wait never leaves the lock held. RWMutex's
// write side (a queuedLocker) has both: a helper waits for the writers'
// queue, a sync.Mutex, and the caller then waits for the readers in,
// which it can give up, withdrawing: a helper never waits as a writer
// that holds readers out.
//
// A helper whose caller gave up is idle until it gets the lock, and the
// next lockWithContext on the same lock adopts it instead of queueing
// another. So a program that keeps retrying a lock that is never released
// (a real deadlock, which is what a deadline is for) keeps one helper per
// concurrent waiter queued on it, not one per attempt.
func lockWithContext(ctx context.Context, lk sync.Locker, unlock func()) bool {
	done := ctx.Done()
	if done == nil {
		lk.Lock()
		return true
	}
	switch l := lk.(type) {
	case cancelLocker:
		return l.LockOrCancel(done)
	case queuedLocker:
		q := l.Queue()
		if t, ok := q.(interface{ TryLock() bool }); !ok || !t.TryLock() {
			if !lockHelped(done, q, q.Unlock) {
				return false
			}
		}
		return l.LockQueued(done)
	}
	return lockHelped(done, lk, unlock)
}

// A cancelLocker is a lock whose wait can be given up: LockOrCancel
// acquires it, or gives up when done is closed, leaving it as it was.
type cancelLocker interface {
	LockOrCancel(done <-chan struct{}) bool
}

// A queuedLocker is a lock whose waiters first take a queue, a sync lock,
// then finish with a wait that can be given up: LockQueued, which releases
// the queue if it gives up.
type queuedLocker interface {
	Queue() sync.Locker
	LockQueued(done <-chan struct{}) bool
}

// lockHelped acquires the sync lock lk through a helper goroutine, or
// gives up when done is closed; see lockWithContext.
func lockHelped(done <-chan struct{}, lk sync.Locker, unlock func()) bool {
	got := make(chan struct{})
	h, queued := helpers.adopt(lk, got)
	if !queued {
		h = &ctxHelper{lk: lk, unlock: unlock, waiter: got}
		go h.run()
	}
	select {
	case <-got:
		return true
	case <-done:
		if helpers.abandon(h, got) {
			return false
		}
		<-got // the helper got the lock first: it is ours
		return true
	}
}

// A ctxHelper is a goroutine queued in lk.Lock on behalf of a
// lockWithContext.
type ctxHelper struct {
	lk     sync.Locker
	unlock func()
	// waiter is closed when the helper has the lock for its caller. It is
	// nil while nobody waits (the caller gave up); guarded by helpers.mu.
	waiter chan struct{}
}

// run waits for the lock, then hands it to the waiter of the moment, or
// releases it if there is none.
func (h *ctxHelper) run() {
	h.lk.Lock()
	if w := helpers.finish(h); w != nil {
		close(w)
		return
	}
	h.unlock()
}

// helpers keeps the idle helpers, per lock. Its mutex is never held while
// a user lock is taken or a channel is closed.
var helpers helperSet

type helperSet struct {
	mu   sync.Mutex
	idle map[sync.Locker][]*ctxHelper
}

// adopt hands an idle helper queued on lk to a new waiter, got, and
// reports whether there was one.
func (s *helperSet) adopt(lk sync.Locker, got chan struct{}) (*ctxHelper, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.idle[lk]
	if len(hs) == 0 {
		return nil, false
	}
	h := hs[0] // the longest queued
	s.drop(lk, 0)
	h.waiter = got
	return h, true
}

// abandon makes h idle if it has not yet handed the lock to got, and
// reports whether it did.
func (s *helperSet) abandon(h *ctxHelper, got chan struct{}) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.waiter != got {
		return false // handed over, or about to be
	}
	h.waiter = nil
	if s.idle == nil {
		s.idle = map[sync.Locker][]*ctxHelper{}
	}
	s.idle[h.lk] = append(s.idle[h.lk], h)
	return true
}

// finish is called by h once it holds the lock: it returns the waiter to
// hand the lock to, or nil (and forgets h, which no one may adopt now) if
// there is none.
func (s *helperSet) finish(h *ctxHelper) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := h.waiter; w != nil {
		h.waiter = nil
		return w
	}
	for i, x := range s.idle[h.lk] {
		if x == h {
			s.drop(h.lk, i)
			break
		}
	}
	return nil
}

// drop removes the i'th idle helper of lk. s.mu is held.
func (s *helperSet) drop(lk sync.Locker, i int) {
	hs := slices.Delete(s.idle[lk], i, i+1)
	if len(hs) == 0 {
		delete(s.idle, lk)
		return
	}
	s.idle[lk] = hs
}
