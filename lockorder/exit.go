//go:build !syncwatch_off

package lockorder

import (
	"fmt"
	"slices"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// ReportBlocked is for a program, or a test binary, about to exit: it
// reports every goroutine that has been blocked for at least minAge in a
// syncwatch wait that only another goroutine could end (a Lock or RLock, a
// Once.Do, a WaitGroup.Wait; not a Cond.Wait, whose goroutine may be idle
// by design, nor a wait bounded by a timeout or a context), and that one
// of the goroutines it needs cannot end (following the chain of waits: one
// has exited or is blocked; a holder asleep under its lock is slow, not
// stuck), as a blocked-at-exit violation that says why;
// and every lock still held by a goroutine that has exited (and still
// reachable: a lock that became garbage harms no one), as a
// held-by-exited-goroutine violation, which says where the lock was
// taken and is Expected unless a goroutine waits for the lock. It returns how many violations it
// recorded. It stops the world once, to read the goroutines' states.
//
// Where the runtime can tell (Go 1.27, or 1.26 built with
// GOEXPERIMENT=goroutineleakprofile), its garbage collection cycle also
// finds the goroutines blocked for good, on anything (a channel, a select,
// a Cond, a WaitGroup, a lock), which it reports as leaked-goroutine
// violations, once each, instead of as blocked-at-exit. The cycle costs
// what runtime.GC does (see bench/ for the figures).
// lockordertest's VerifyNone and VerifyTestMain call it.
func ReportBlocked(minAge time.Duration) int { return ReportBlockedExcept(minAge, true, nil) }

// ReportBlockedExcept is [ReportBlocked] for a caller that filters, as
// lockordertest does: with leaks false it does not ask the runtime for
// leaked goroutines, and a violation for which ignore (if not nil) returns
// true is neither recorded nor delivered. A leaked goroutine ignored is
// not reported as blocked-at-exit either.
func ReportBlockedExcept(minAge time.Duration, leaks bool, ignore func(Violation) bool) int {
	if loadMode() == ModeOff {
		return 0
	}
	// Where it can, the runtime finds the leaked goroutines in a garbage
	// collection cycle, which the dump below shows.
	if leaks {
		leak.Detect()
	}
	g := waitfor.Snapshot()
	states := gls.States()
	// After both: what is not in it has exited. Past the cleanups the
	// leak detection's collection queued (W7): the runtime's goroutine
	// running them is awake, and would keep a wait whose blockers are
	// unknown (an Add/Done group) from being reported.
	d := waitfor.FreshForExit(g)
	n := 0
	stuck := g.Stuckness(d)
	publish := func(v Violation) {
		if (ignore == nil || !ignore(v)) && publishCounted(v) {
			n++
		}
	}
	leaked := map[int64]bool{}
	if leaks {
		for _, id := range d.LeakedIDs() {
			leaked[id] = true
			publish(leakViolation(id, g, d))
		}
	}
	for _, w := range g.Waits() {
		if w.Bounded || w.Kind == waitfor.KindCond || w.Kind == waitfor.KindWatch || w.Age() < minAge {
			continue
		}
		if d.Exited(w.Goroutine) || leaked[w.Goroutine] {
			continue // it has gone since the snapshot, or is reported above
		}
		if !stuck(w) {
			continue // a goroutine still awake can end it: a guess, not a verdict
		}
		v := waitViolation(KindBlockedAtExit, waitfor.Finding{Waits: []*waitfor.Wait{w}, Graph: g, Dump: d},
			blockedAtExitWhat(w.Age(), waitfor.Describe(w)))
		publish(v)
	}
	if Mode(modeWord.Load()&modeMask) != ModeCheck {
		return n
	}
	dead, cycles := exitedHolds(states, d.Exited, nil)
	for _, v := range cycles {
		publish(v)
	}
	slices.SortFunc(dead, func(a, b held.DeadHold) int { return int(a.Goroutine - b.Goroutine) })
	for _, h := range dead {
		l := h.Entry.Lock
		// A lock left held that no goroutine waits for harms no one yet
		// (a test that abandons a lock on purpose): it is shown, as
		// expected. It fails where a goroutine is blocked behind it.
		waiters := waitersOf(g, d, l)
		st, what := heldStack(h.Entry.Note, l)
		detail := heldAt(h.Goroutine, h.Entry.Note, l)
		switch what {
		case tookHere:
			detail = tookAbove
		case firstHere:
			detail = firstAbove
		}
		v := Violation{
			Kind:      KindHeldByExited,
			Message:   heldAtExitMessage(l.Name(), h.Entry.Read, h.Goroutine, waiters),
			Time:      time.Now(),
			Goroutine: h.Goroutine,
			Stack:     st, // names the test that took it
			Holder:    h.Goroutine,
			Locks:     []LockRef{ref(l)},
			Detail:    detail,
			Expected:  waiters == 0,
			Key:       fmt.Sprintf("%s:exit:%d:%d", KindHeldByExited, l.ID, h.Goroutine),
		}
		publish(v)
	}
	return n
}

// waitersOf counts the goroutines of g, still there in d, blocked waiting
// for l.
func waitersOf(g *waitfor.Graph, d *waitfor.Dump, l *class.Lock) int {
	n := 0
	for _, w := range g.Waits() {
		if w.Lock == l && !d.Exited(w.Goroutine) {
			n++
		}
	}
	return n
}

// exitedHolds returns the holds of exited goroutines whose locks are still
// reachable, to report left held, and the cycles that the locks kept by
// them, garbage or not, no longer hold back (RULES.md R24). between, if
// not nil, is called with the number of kept holds once they are read,
// for tests.
func exitedHolds(states []*held.G, exited func(int64) bool, between func(kept int)) ([]held.DeadHold, []Violation) {
	kept := held.KeptHolds(states, exited, keptGate)
	dead := held.ReachableDeadHolds(states, exited)
	reachable := make(map[uint64]bool, len(dead))
	for _, h := range dead {
		reachable[h.Entry.Lock.ID] = true
	}
	if between != nil {
		between(len(kept))
	}
	return dead, ungateKept(kept, reachable)
}
