//go:build !syncwatch_off

package lockorder

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/report"
)

// Bugs and expected conditions are kept in separate stores, each bounded,
// so that a flood of expected reports (rejected stale gradients) can never
// crowd out a real bug.
var (
	records  report.Store[Violation]
	expected report.Store[Violation]
	lastID   atomic.Uint64
)

// Report hands v to the report pipeline shared by every syncwatch package:
// unless a violation with the same kind, message and stack was reported
// before, it is recorded for [Violations] and lockordertest, passed to the
// handler and traced. Packages built on lockorder (barrier, paramserver)
// report through it, and so can a program's own invariant checks.
//
// Report calls the handler on the calling goroutine, with no syncwatch lock
// held. It does nothing in ModeOff.
func Report(v Violation) { ReportContext(context.Background(), v) }

// ReportContext is [Report] for a violation that happened on behalf of ctx
// (an Await, an Apply): its span is a child of the span in ctx.
func ReportContext(ctx context.Context, v Violation) {
	if loadMode() == ModeOff {
		return
	}
	if v.Time.IsZero() {
		v.Time = time.Now()
	}
	if v.Key == "" {
		top := ""
		if len(v.Stack) > 0 {
			top = v.Stack[0].String()
		}
		v.Key = fmt.Sprintf("%s|%s|%s|%s", v.source(), v.Kind, v.Message, top)
	}
	publishContext(ctx, v)
}

// publish records v and, if it is new, delivers it. It must be called with
// no internal lock held.
func publish(v Violation) { publishContext(context.Background(), v) }

func publishContext(ctx context.Context, v Violation) { publishNew(ctx, v) }

// publishAll publishes each of vs, as publish does. The work stays out of
// line, called only if there is some, so that its callers, some on a new
// lock's first acquisition, keep small frames: a Violation copied into one
// made new goroutines grow their stacks.
func publishAll(vs []Violation) {
	if len(vs) > 0 {
		publishEach(vs)
	}
}

//go:noinline
func publishEach(vs []Violation) {
	for i := range vs {
		publish(vs[i])
	}
}

// publishCounted is publish, reporting whether v was new.
func publishCounted(v Violation) bool { return publishNew(context.Background(), v) }

// publishNew records v and, if it is new, delivers it and reports true.
func publishNew(ctx context.Context, v Violation) bool {
	if v.Source == "" {
		v.Source = "lockorder"
	}
	store := &records
	if v.Expected {
		store = &expected
	}
	flight := recordFlight(&v) // the trace file, named in v before it is kept
	n := v.Instances
	test := testOf(&v)
	if test == "" && !store.Seen(v.Key) {
		test = testByAncestry(&v) // a new record: worth a goroutine dump
	}
	v.Test = test
	number := func(kept *Violation) { // the handler and span see the kept record's ID
		kept.ID = lastID.Add(1)
		kept.LatestID = kept.ID
		kept.countTest(test)
		v.ID, v.LatestID, v.Tests = kept.ID, kept.ID, kept.Tests
	}
	merge := func(kept *Violation) {
		kept.Instances += n
		if n > 0 {
			kept.LatestID = lastID.Add(1)
			kept.countTest(test)
		}
	}
	dropped := store.Dropped()
	if !store.AddGrouped(v.Key, v.instance, v, number, merge) {
		flight.discard()
		return false
	}
	if store == &records && store.Dropped() > dropped {
		countNotKept(&v) // new, but past what is kept
	}
	c := cfg.Load()
	emitSpan(ctx, c, v)
	deliver(c, v)
	return true
}

// deliver calls the handler, unless the calling goroutine is already
// running it: a violation the handler itself causes is recorded and
// printed, not handed back to a handler that may hold a lock.
func deliver(c *config, v Violation) {
	id := goid.ID()
	gs := gls.Find(id)
	if c.handler == nil || gs != nil && gs.InHandler {
		// The default handler: bugs go to standard error; expected
		// conditions are only recorded and traced. Under
		// lockordertest.VerifyTestMain, which prints every report in full
		// when the tests end, one line says what happened and when.
		switch {
		case v.Expected:
		case report.Harness() && !v.printNow:
			fmt.Fprintf(os.Stderr, "lockorder: %s: %s (the full report comes when the tests end)\n", v.Kind, v.Message)
		default:
			fmt.Fprintln(os.Stderr, v.String())
		}
		return
	}
	// The state is marked while the handler runs, so it must be busy:
	// rested by this call if this call woke it.
	woke := gs == nil || !gs.Busy()
	gs = gls.Get(id)
	gs.InHandler = true
	defer func() {
		gs.InHandler = false
		if woke {
			gs.Rest()
		}
	}()
	c.handler(v)
}

// Violations returns every distinct violation recorded since the program
// started or [Reset] was last called, oldest first. A long-wait whose
// waits have all ended since it was reported is returned marked Expected,
// with how long they lasted: the waiter was slow, not stuck.
func Violations() []Violation {
	out := records.All()
	for i := range out {
		markEnded(&out[i])
	}
	out = append(out, expected.All()...)
	slices.SortFunc(out, func(a, b Violation) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// NotKept returns, by kind, how many distinct violations, not Expected,
// were reported (delivered to the handler or printed) but not kept for
// [Violations], which holds at most 10,000 (since the program started or
// [Reset] was last called), since the program started: [Reset] does not
// clear these counts.
func NotKept() map[Kind]int {
	notKept.mu.Lock()
	defer notKept.mu.Unlock()
	return maps.Clone(notKept.n)
}

// ExitedHoldsDropped returns how many locks left held by goroutines that
// had exited were forgotten, since the program started, for want of room:
// check mode frees the state of a goroutine that exited holding locks
// once a goroutine dump shows it gone, keeping at most 4,096 such holds
// that have lived through a garbage collection since (the earliest freed
// dropped first; those freed by one dump in no particular order) for
// [ReportBlocked] to report as held-by-exited-goroutine and for RULES.md
// R24. A hold forgotten is not reported at the exit check; a goroutine
// blocked behind its lock still is, by the wait-for monitor. A hold whose
// lock became garbage is not counted: it harms no one; except a lock R24
// would take out of gates, whose id waits for the next exit check, 4,096
// at most, past which the earliest is dropped and counted.
func ExitedHoldsDropped() int64 {
	_, n := held.Graves()
	return n
}

// notKept counts by kind the violations NotKept returns.
var notKept struct {
	mu sync.Mutex
	n  map[Kind]int
}

// countNotKept counts v as reported and not kept.
func countNotKept(v *Violation) {
	notKept.mu.Lock()
	defer notKept.mu.Unlock()
	if notKept.n == nil {
		notKept.n = make(map[Kind]int)
	}
	notKept.n[v.Kind]++
}

// Reset forgets the lock-order graph, the chain cache and the recorded
// violations, so that a test starts from a clean slate, and frees the
// named classes no live mutex belongs to. The configuration and the locks
// goroutines hold right now are kept.
func Reset() {
	resetEngine()
	records.Reset()
	expected.Reset()
	ancestries.Store(0)
	forgetSlowWaits()
}
