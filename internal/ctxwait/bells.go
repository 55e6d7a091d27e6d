package ctxwait

import (
	"sync"
	"sync/atomic"
)

// Bells are the waiters, in synctest bubbles, for a token on a channel of
// no bubble (internal/rwlock's readers and writer wait for one), with a
// way to give up. A select on that channel would not be durable, and the
// bubble's clock would stand still while it lasts, so a context's
// deadline there would never come. Each such waiter waits on a bell of
// its bubble instead, which the sender of a token rings if it can, and
// polls for the rest (rule 4). The zero value has no waiters.
type Bells struct {
	mu sync.Mutex
	n  atomic.Int32 // len(ws), read without mu
	ws []*waiter
}

// Wait calls try until it reports true, and then reports true; between
// calls it waits for a ring, a poll or done, and reports false once done
// is closed. try takes a token without waiting for one.
func (b *Bells) Wait(try func() bool, done <-chan struct{}) bool {
	w := newWaiter()
	b.mu.Lock()
	b.ws = append(b.ws, w)
	b.n.Add(1)
	b.mu.Unlock()
	defer b.leave(w)
	p := newPoll(nil, nil, true)
	defer p.t.Stop()
	for !try() {
		if !w.awaitPolled(done, p) {
			return false
		}
	}
	return true
}

// Len returns how many waiters wait.
func (b *Bells) Len() int { return int(b.n.Load()) }

// leave unregisters w.
func (b *Bells) leave(w *waiter) {
	b.mu.Lock()
	for i, x := range b.ws {
		if x == w {
			b.ws = append(b.ws[:i], b.ws[i+1:]...)
			b.n.Add(-1)
			break
		}
	}
	b.mu.Unlock()
}

// Ring rings every waiter the caller can ring: those of no bubble and
// those of its own. Call it after a token is sent: a waiter that
// registered too late for it finds the token when it tries.
func (b *Bells) Ring() {
	if b.n.Load() == 0 {
		return
	}
	var r ringer
	b.mu.Lock()
	for _, w := range b.ws {
		if r.can(w) {
			w.ring()
		}
	}
	b.mu.Unlock()
}
