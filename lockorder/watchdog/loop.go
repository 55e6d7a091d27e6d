package watchdog

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/mono"
)

// A Loop is one loop a program lives by (an inference loop, a training
// step, a queue consumer), watched for stalls: work is pending and the
// loop has not stepped for longer than its bound.
//
// The loop calls [Loop.Step] once per iteration, from the goroutine that
// runs it; work is counted with [Loop.Begin] and [Loop.End], or by a
// function given with [WithPending], or both. A loop with no pending work
// is idle, never stalled, however long it goes without a Step.
//
// A Loop is safe for concurrent use. Create it with [New] and stop
// watching it with [Loop.Close]; the zero Loop is not usable. A Loop must
// not be copied.
type Loop struct {
	_     noCopy
	name  string
	id    uint64
	cfg   config
	every time.Duration // how often the timer looks
	tel   *telemetry

	// Written by Step, Begin and End, which take no lock.
	lastStep atomic.Int64  // mono reading of the latest Step, 0 before the first
	gid      atomic.Int64  // goroutine of the latest Step
	steps    atomic.Uint64 // Steps so far
	count    atomic.Int64  // Begin calls less End calls
	began    atomic.Int64  // mono reading when count last rose from 0

	mu       sync.Mutex
	idle     sync.Cond // signalled when a check ends; uses mu
	timer    *time.Timer
	closed   bool
	checking int64  // goroutine running a check of the timer, 0 if none
	fnSince  int64  // mono reading when cfg.pending was first seen non-zero, 0 while zero
	reported uint64 // 1 + the Step count of the episode reported last, 0 before the first
	episodes uint64 // stall episodes reported
}

var (
	lastID atomic.Uint64
	// open lists the loops not closed, for Stalls and Loops: as many as the
	// program keeps open.
	open struct {
		sync.Mutex
		loops []*Loop
	}
)

// Check intervals: an eighth of the bound, so that a stall is reported
// at most an eighth of the bound late, within these limits.
const (
	minEvery = 5 * time.Millisecond
	maxEvery = time.Second
)

// New returns a loop named name (as it appears in reports and health
// output) and starts watching it: a timer looks at it every eighth of its
// bound, at most once a second, and starts no goroutine between looks. An
// empty name panics.
func New(name string, opts ...Option) *Loop {
	if name == "" {
		panic("watchdog: empty loop name")
	}
	c := config{bound: DefaultBound}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	l := &Loop{name: name, id: lastID.Add(1), cfg: c, every: min(max(c.bound/8, minEvery), maxEvery)}
	l.idle.L = &l.mu
	l.tel = newTelemetry(l)
	open.Lock()
	open.loops = append(open.loops, l)
	open.Unlock()
	l.mu.Lock()
	l.timer = time.AfterFunc(l.every, l.tick)
	l.mu.Unlock()
	return l
}

// Name returns the loop's name.
func (l *Loop) Name() string { return l.name }

// Bound returns how long the loop may go without a Step while work is
// pending.
func (l *Loop) Bound() time.Duration { return l.cfg.bound }

// Step records that the loop made progress: call it once per iteration,
// from the goroutine running the loop, before anything that may block
// (so that a stall report can say what that goroutine is blocked on). It
// ends a stall. Step costs a clock reading and three atomic stores.
func (l *Loop) Step() {
	l.lastStep.Store(mono.Now())
	l.gid.Store(goid.ID())
	l.steps.Add(1)
}

// Begin records one more item of work pending for the loop (a request
// queued for it). Each Begin must be matched by one [Loop.End] once the
// item is done. The stall clock of work that arrives at an idle loop
// starts at its Begin, not at the loop's last Step.
func (l *Loop) Begin() {
	for {
		n := l.count.Load()
		if n == 0 {
			// Record when the loop stopped being idle before it stops,
			// so that no look sees pending work with an older time.
			l.began.Store(mono.Now())
		}
		if l.count.CompareAndSwap(n, n+1) {
			return
		}
	}
}

// End records that an item of work counted by [Loop.Begin] is done. An
// End without a Begin panics.
func (l *Loop) End() {
	if l.count.Add(-1) < 0 {
		l.count.Add(1)
		panic(fmt.Sprintf("watchdog: End without Begin on loop %q", l.name))
	}
}

// Pending returns the work pending now: Begin calls not yet ended plus
// what the [WithPending] function returns.
func (l *Loop) Pending() int {
	n := int(l.count.Load())
	if l.cfg.pending != nil {
		n += l.cfg.pending()
	}
	return n
}

// Close stops watching the loop: its timer is stopped, a check in
// progress is waited for, and the loop leaves [Stalls], [Loops] and the
// metrics. Step, Begin and End may still be called and do nothing useful.
// Close is idempotent.
func (l *Loop) Close() {
	me := goid.ID()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.timer.Stop()
	// A check reporting a stall may call a violation handler that closes
	// the loop: it must not wait for itself.
	for l.checking != 0 && l.checking != me {
		l.idle.Wait()
	}
	l.mu.Unlock()
	open.Lock()
	open.loops = slices.DeleteFunc(open.loops, func(x *Loop) bool { return x == l })
	open.Unlock()
	l.tel.close()
}

// openLoops returns the loops not closed, in the order they were created.
func openLoops() []*Loop {
	open.Lock()
	defer open.Unlock()
	return slices.Clone(open.loops)
}

// noCopy makes go vet's copylocks check report copies of a Loop.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
