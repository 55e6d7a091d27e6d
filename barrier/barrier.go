package barrier

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/hb"
	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/lockorder"
)

// A Barrier is a reusable, bounded rendezvous for a fixed set of ranks
// 0..parties-1. Each round is a generation: it completes when every
// participating rank has called [Barrier.Await] for it, and breaks, for
// all its waiters at once, when one of them gives up.
//
// A Barrier is safe for use by many goroutines. Create it with [New]; the
// zero Barrier is not usable and its methods panic. A Barrier must not be
// copied.
type Barrier struct {
	cfg     config
	id      uint64
	parties int
	tel     *telemetry

	// mu guards everything below and the current generation. It is a
	// plain sync.Mutex, not a lockorder one: the barrier's own lock must
	// not appear in the program's lock-order graph. It is never held while
	// user code (the action, a violation handler) or telemetry runs.
	mu    sync.Mutex
	cur   *generation
	ranks rankTable
	left  map[int]error // the ranks that called Leave, and Leave's reason
	hist  history
	late  lateErrors
}

var lastID atomic.Uint64

// New returns a barrier for parties ranks, numbered 0..parties-1. Fewer
// than one party panics. The barrier's memory grows with the ranks that
// arrive at it, not with parties: New itself allocates only an index of
// pages of ranks, and a page when one of its ranks first arrives.
func New(parties int, opts ...Option) *Barrier {
	if parties < 1 {
		panic(fmt.Sprintf("barrier: %d parties, want at least 1", parties))
	}
	c := config{timeout: DefaultTimeout, history: DefaultHistory}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	b := &Barrier{
		cfg:     c,
		id:      lastID.Add(1),
		parties: parties,
		ranks:   newRankTable(parties),
		hist:    newHistory(c.history),
	}
	if b.cfg.name == "" {
		b.cfg.name = "barrier#" + strconv.FormatUint(b.id, 10)
	}
	b.tel = newTelemetry(&b.cfg)
	b.cur = b.newGenerationLocked(0, firstArrivals)
	registry.Add(registry.Barriers, b, (*Barrier).view) // weakly, for debughttp's page
	return b
}

// Name returns the barrier's name (see [WithName]).
func (b *Barrier) Name() string { return b.cfg.name }

// Parties returns the number of ranks.
func (b *Barrier) Parties() int { return b.parties }

// Await arrives at the barrier as rank and waits until every participating
// rank has arrived for the same generation, which it returns. Generations
// are numbered from 0 and increase by exactly one per round; every call
// for a rank is for the next generation of that rank, so ranks never drift
// apart.
//
// The wait is bounded by ctx and by the barrier's timeout ([WithTimeout]),
// counted from the generation's first arrival, whichever ends first. If
// either ends before the generation completes, the generation breaks and
// every one of its waiters returns the same *[BrokenError], naming the
// missing ranks and why each is missing. A generation that completed
// before the end was noticed still succeeds, and an ending never breaks a
// later generation. A rank arriving for a generation that already broke
// without it gets that generation's *BrokenError at once, and its next
// call is for the following generation. Like x/sync's semaphore, Await
// may succeed even if ctx is already done: the last rank to arrive
// completes the generation without waiting.
//
// Other errors: a *[DuplicateArrivalError] if rank already arrived for the
// current generation, a *[LeftError] if rank left the barrier. A rank
// outside 0..parties-1 or a nil ctx panics.
//
// Waiting while holding a lockorder lock is reported (lock-held-at-barrier
// violation): it is how a barrier deadlocks. The wait proceeds.
//
// [Op] labels the arrival with its collective operation; a generation
// whose ranks arrive for different operations breaks at once (see
// [MismatchError]).
func (b *Barrier) Await(ctx context.Context, rank int, opts ...AwaitOption) (generation uint64, err error) {
	b.checkRank(rank)
	if ctx == nil {
		panic("barrier: Await with nil Context")
	}
	gid := goid.ID()
	if held := lockorder.HeldLocks(); len(held) > 0 {
		b.reportLockHeld(ctx, rank, gid, held)
	}
	var knew *hb.Clock
	if hb.Fork != nil {
		knew = hb.Fork()
	}
	now := time.Now()
	b.mu.Lock()
	g := b.cur
	if reason, gone := b.left[rank]; gone {
		err := &LeftError{Barrier: b.cfg.name, Rank: rank, Reason: reason}
		b.mu.Unlock()
		return g.num, err
	}
	st := b.ranks.at(rank)
	if n := st.next; n < g.num {
		st.gid = gid
		err := b.late.collect(b, n, rank)
		st.next = n + 1
		b.mu.Unlock()
		return n, err
	}
	if st.next > g.num {
		b.mu.Unlock()
		return g.num, &DuplicateArrivalError{Barrier: b.cfg.name, Rank: rank, Generation: g.num}
	}
	st.gid, st.next = gid, g.num+1
	if knew != nil {
		hb.Publish(&g.clock, knew)
	}
	op := OpOf(opts...)
	g.arrivals = append(g.arrivals, Arrival{Rank: rank, Goroutine: gid, At: now, Op: op})
	g.waitingFor--
	if m := b.checkOpLocked(g, st, op); m != nil {
		err := b.breakLocked(g, m, rank, now)
		b.mu.Unlock()
		b.reportBroken(ctx, err, gid)
		return g.num, err
	}
	if g.ready() {
		return b.trip(ctx, g, rank, gid)
	}
	if g.timer == nil {
		b.armLocked(g, rank, now)
	}
	b.mu.Unlock()
	return b.wait(ctx, g, rank, gid, now)
}

// armLocked starts g's timer at its first waiting arrival. One timer per
// generation bounds every waiter by the barrier's timeout: the first
// arrival's bound is the earliest. It fires halfway, for the slow report,
// and at the deadline.
func (b *Barrier) armLocked(g *generation, rank int, now time.Time) {
	g.firstRank = rank
	g.deadline = now.Add(b.cfg.timeout)
	g.timer = time.NewTimer(b.cfg.timeout / 2)
}

// trip completes g, whose last participating rank just arrived: it runs
// the action, then releases the waiters. Called with b.mu held; unlocks it.
func (b *Barrier) trip(ctx context.Context, g *generation, rank int, gid int64) (uint64, error) {
	g.state = acting
	b.mu.Unlock()
	if b.cfg.action != nil {
		if err := b.runAction(ctx, g, rank, gid); err != nil {
			return g.num, err
		}
	}
	now := time.Now()
	b.mu.Lock()
	if g.state == broken { // a waiter gave up, or Abort, while the action ran
		b.mu.Unlock()
		return g.num, g.err
	}
	lag := b.completeLocked(g, now)
	b.mu.Unlock()
	b.tel.completed(ctx, lag)
	learnGeneration(g)
	return g.num, nil
}

// runAction runs the action for g with no lock held. An error or a panic
// breaks g; the panic is then re-raised.
func (b *Barrier) runAction(ctx context.Context, g *generation, rank int, gid int64) (err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		r := recover()
		var cause error
		if r != nil {
			cause = fmt.Errorf("action for generation %d panicked: %v", g.num, r)
		} else {
			cause = fmt.Errorf("action for generation %d called runtime.Goexit", g.num)
		}
		b.giveUp(ctx, g, rank, gid, cause)
		if r != nil {
			panic(r)
		}
	}()
	aerr := b.cfg.action(g.num)
	returned = true
	if aerr == nil {
		return nil
	}
	return b.giveUp(ctx, g, rank, gid, fmt.Errorf("action for generation %d: %w", g.num, aerr))
}

func (b *Barrier) checkRank(rank int) {
	b.mustInit()
	if rank < 0 || rank >= b.parties {
		panic(fmt.Sprintf("barrier: rank %d out of range [0, %d)", rank, b.parties))
	}
}

func (b *Barrier) mustInit() {
	if b.parties == 0 {
		panic("barrier: Barrier not created with New")
	}
}
