package staleness

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/lockorder"
)

// A Clock keeps the iteration clocks of N workers under stale synchronous
// parallel (SSP) rules: a worker may run at most maxSkew iterations ahead of
// the slowest worker that has not left. maxSkew 0 is bulk synchronous
// parallel: every worker waits for all the others after each iteration.
//
// Workers are numbered 0 to N-1 and every clock starts at 0. A Clock is
// safe for concurrent use; each worker should be driven by one goroutine
// at a time.
//
// A Clock is a read gate, not a collective: a worker that gives up waiting
// keeps its advanced clock, and nothing is undone for the others.
//
// Create clocks with [NewClock]; the zero Clock is not usable. A Clock
// must not be copied.
type Clock struct {
	_       noCopy
	mu      *lockorder.Mutex
	name    string
	id      uint64
	maxSkew uint64
	maxWait time.Duration

	// Guarded by mu.
	clocks  []uint64
	left    []bool
	gids    []int64 // goroutine of each worker's last Advance, 0 before
	active  int
	min     uint64
	changed chan struct{} // closed when min rises or a worker leaves; nil until someone waits
}

var clockIDs atomic.Uint64

// NewClock returns a clock for workers numbered 0 to workers-1, all at
// clock 0, that lets a worker run at most maxSkew iterations ahead of the
// slowest. A workers count below 1 panics.
func NewClock(workers int, maxSkew uint64, opts ...Option) *Clock {
	if workers < 1 {
		panic(fmt.Sprintf("staleness: NewClock with %d workers", workers))
	}
	cfg := config{maxWait: DefaultMaxWait}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	id := clockIDs.Add(1)
	c := &Clock{
		mu:      lockorder.NewMutex("staleness.Clock"),
		name:    fmt.Sprintf("staleness.Clock#%d", id),
		id:      id,
		maxSkew: maxSkew,
		maxWait: cfg.maxWait,
		clocks:  make([]uint64, workers),
		left:    make([]bool, workers),
		gids:    make([]int64, workers),
		active:  workers,
	}
	registry.Add(registry.Clocks, c, (*Clock).view) // weakly, for debughttp's page
	return c
}

// String returns the clock's name, "staleness.Clock#N", as it appears in
// reports.
func (c *Clock) String() string { return c.name }

// Workers returns the number of workers the clock was created for.
func (c *Clock) Workers() int { return len(c.clocks) }

// MaxSkew returns the bound given to NewClock.
func (c *Clock) MaxSkew() uint64 { return c.maxSkew }

func (c *Clock) checkWorker(worker int) {
	if worker < 0 || worker >= len(c.clocks) {
		panic(fmt.Sprintf("staleness: worker %d out of range [0, %d)", worker, len(c.clocks)))
	}
}

// Advance records that worker finished an iteration: its clock goes from c
// to c+1. It then waits until c+1 minus the smallest clock of the workers
// that have not left is at most maxSkew, and returns c+1.
//
// The wait is bounded by ctx and by the clock's max wait ([WithMaxWait]).
// If either ends it first, Advance returns c+1 and a *[WaitError] naming
// the slowest workers; the clock stays at c+1. A timeout (ctx's deadline
// or the max wait) is also reported to lockorder as a clock-wait-timeout
// violation: a worker held back that long is a bug signal, typically a
// peer that died without calling [Clock.Leave], or one blocked on a lock.
// Like x/sync's semaphore, Advance may succeed without waiting even if ctx
// is already done.
//
// Advance for a worker that has left returns its clock and a *[LeftError]
// without advancing; so does a waiting Advance whose worker is made to
// leave. A worker out of range or a nil ctx panics.
func (c *Clock) Advance(ctx context.Context, worker int) (uint64, error) {
	if ctx == nil {
		panic("staleness: Advance with nil Context")
	}
	c.checkWorker(worker)
	gid := goid.ID()
	c.mu.Lock()
	if c.left[worker] {
		now := c.clocks[worker]
		c.mu.Unlock()
		return now, &LeftError{Worker: worker, Clock: now}
	}
	c.clocks[worker]++
	now := c.clocks[worker]
	c.gids[worker] = gid
	if now-1 == c.min {
		c.updateMin()
	}
	if c.ready(now) {
		c.mu.Unlock()
		return now, nil
	}
	ch := c.waitChan()
	c.mu.Unlock()
	return c.wait(ctx, worker, now, ch, gid)
}

// ready reports whether a worker at clock now may proceed. Called with mu
// held.
func (c *Clock) ready(now uint64) bool { return now-c.min <= c.maxSkew }

// updateMin recomputes the smallest clock of the workers that have not
// left and wakes the waiters if it rose. With every worker gone the
// minimum is the largest clock, so that it never decreases. Called with mu
// held.
func (c *Clock) updateMin() {
	m, found := uint64(0), false
	for w, clk := range c.clocks {
		if !c.left[w] && (!found || clk < m) {
			m, found = clk, true
		}
	}
	if !found {
		for _, clk := range c.clocks {
			m = max(m, clk)
		}
	}
	if m != c.min {
		c.min = m
		c.broadcast()
	}
}

// broadcast wakes every waiting Advance. Called with mu held.
func (c *Clock) broadcast() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// waitChan returns the channel the next broadcast closes, so that an
// Advance that does not wait allocates nothing. Called with mu held.
func (c *Clock) waitChan() <-chan struct{} {
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

// Leave removes worker from the clock: its clock no longer holds the
// others back, and its own Advance, waiting or later, returns a
// *[LeftError]. Call it when a worker finishes, or when a supervisor
// decides a worker is dead. Leave is idempotent; every worker may leave. A
// worker out of range panics.
func (c *Clock) Leave(worker int) {
	c.checkWorker(worker)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left[worker] {
		return
	}
	c.left[worker] = true
	c.active--
	c.updateMin()
	c.broadcast() // wake the worker's own Advance, if it waits
}

// Clock returns worker's current clock. A worker out of range panics.
func (c *Clock) Clock(worker int) uint64 {
	c.checkWorker(worker)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clocks[worker]
}

// Clocks returns every worker's clock, read at one instant.
func (c *Clock) Clocks() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]uint64(nil), c.clocks...)
}

// Min returns the smallest clock among the workers that have not left, or,
// once every worker has left, the largest clock. It never decreases.
func (c *Clock) Min() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.min
}

// Active returns the number of workers that have not left.
func (c *Clock) Active() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active
}

// noCopy makes go vet's copylocks check report copies of a Clock.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
