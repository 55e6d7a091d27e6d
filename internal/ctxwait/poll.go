package ctxwait

import (
	"sync"
	"time"
)

// The poll of rule 2: its first interval, doubled up to pollMax.
const (
	pollMin = 100 * time.Microsecond
	pollMax = 100 * time.Millisecond
)

// A poll is rule 2's timer, for a waiter of the table. Only the table's
// Acquire makes one: a program whose waits are all in Queues then links no
// time.NewTimer, whose channel of time.Time links time's formatting.
type poll struct {
	t     *time.Timer
	d     time.Duration    // its current interval
	c     <-chan time.Time // t.C, until no release can miss the waiter
	mu    *sync.Mutex      // guards q
	q     *queue           // the waiter's
	since uint64           // q.visits once the waiter had registered
}

// newPoll starts the poll of a waiter registered in q, whose fields mu
// guards.
func newPoll(mu *sync.Mutex, q *queue) *poll {
	mu.Lock()
	since := q.visits
	mu.Unlock()
	t := time.NewTimer(pollMin)
	return &poll{t: t, d: pollMin, c: t.C, mu: mu, q: q, since: since}
}

// tick follows a tick of the timer. Once a release has visited the queue
// since the waiter registered, no release can miss the waiter, and the
// poll stops (rule 2); until then the timer restarts with twice the
// interval, up to pollMax.
func (p *poll) tick() {
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
