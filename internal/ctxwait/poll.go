package ctxwait

import (
	"sync"
	"time"
)

// The poll of rules 2 and 4: its first interval, doubled up to pollMax,
// or, for a waiter in a synctest bubble, whose intervals are on the
// bubble's clock, up to bubblePollMax.
const (
	pollMin       = 100 * time.Microsecond
	pollMax       = 100 * time.Millisecond
	bubblePollMax = time.Second
)

// A poll is rule 2's timer, for a waiter of the table, or rule 4's, for a
// waiter in a synctest bubble. Only Acquire makes one, and in a Queue only
// for a waiter in a bubble: a program whose waits are all in Queues then
// links no time.NewTimer, whose channel of time.Time links time's
// formatting.
type poll struct {
	t     *time.Timer
	d     time.Duration    // its current interval
	c     <-chan time.Time // t.C, until no release can miss the waiter
	mu    *sync.Mutex      // guards q
	q     *queue           // the waiter's
	since uint64           // q.visits once the waiter had registered
	// forever: a waiter in a bubble polls until it stops waiting, since
	// a release from outside its bubble cannot ring it (rule 4).
	forever bool
}

// newPoll starts the poll of a waiter registered in q, whose fields mu
// guards; forever for a waiter in a bubble.
func newPoll(mu *sync.Mutex, q *queue, forever bool) *poll {
	var since uint64
	if !forever {
		mu.Lock()
		since = q.visits
		mu.Unlock()
	}
	t := time.NewTimer(pollMin)
	return &poll{t: t, d: pollMin, c: t.C, mu: mu, q: q, since: since, forever: forever}
}

// tick follows a tick of the timer. Once a release has visited the queue
// since the waiter registered, no release can miss the waiter, and the
// poll stops (rule 2); until then the timer restarts with twice the
// interval, up to pollMax. A waiter in a bubble polls on, up to
// bubblePollMax.
func (p *poll) tick() {
	if p.forever {
		p.d = min(2*p.d, bubblePollMax)
		p.t.Reset(p.d)
		return
	}
	p.mu.Lock()
	visited := p.q.visits != p.since
	p.mu.Unlock()
	if visited {
		p.c = nil
		return
	}
	p.d = min(2*p.d, pollMax)
	p.t.Reset(p.d)
}
