package barrier

import (
	"context"
	"fmt"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
)

// Abort breaks the current generation for every rank, with a cause that
// matches [ErrAborted] and wraps reason (which may be nil). Its waiters
// return a *[BrokenError] at once; ranks that have not arrived yet get the
// same error from their next Await, so all ranks stay on the same
// generation. The barrier stays usable: the next generation starts afresh.
//
// The break is reported as an expected barrier-broken violation, since it
// was asked for.
func (b *Barrier) Abort(reason error) {
	b.mustInit()
	cause := ErrAborted
	if reason != nil {
		cause = fmt.Errorf("%w: %w", ErrAborted, reason)
	}
	now := time.Now()
	b.mu.Lock()
	err := b.breakLocked(b.cur, cause, -1, now)
	b.mu.Unlock()
	b.reportBroken(context.Background(), err, goid.ID())
}

// Leave takes rank out of the barrier for good, for the given reason (a
// worker died): generations no longer wait for it, and its later Awaits
// return a *[LeftError]. If the rank has already arrived for the current
// generation, that arrival still counts. If the current generation was
// waiting only for rank, Leave completes it, running the action (see
// [WithAction]) in the caller. Leaving twice does nothing.
func (b *Barrier) Leave(rank int, reason error) {
	b.checkRank(rank)
	b.mu.Lock()
	if _, gone := b.left[rank]; gone {
		b.mu.Unlock()
		return
	}
	if b.left == nil {
		b.left = make(map[int]error)
	}
	b.left[rank] = reason
	next := b.ranks.get(rank).next
	b.late.forget(next)
	g := b.cur
	if g.state == pending && next <= g.num { // rank has not arrived for g
		g.waitingFor--
	}
	if g.ready() {
		b.trip(context.Background(), g, -1, goid.ID())
		return
	}
	b.mu.Unlock()
}

// Current returns the current generation and the ranks that have arrived
// for it so far, in arrival order.
func (b *Barrier) Current() (generation uint64, arrived []int) {
	b.mustInit()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur.num, b.cur.ranks()
}
