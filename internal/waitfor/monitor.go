package waitfor

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/mono"
)

// Settings configure the monitor, which looks at the registered waits
// every Tick while there are any, and exits while there are none (so it
// is no goroutine of the program's while nothing waits).
type Settings struct {
	// Tick is how often the monitor looks.
	Tick time.Duration
	// Grace is how long a cycle of waits must last before it is reported:
	// any goroutine may unlock a Mutex, so a goroutine outside the cycle
	// could still break it.
	Grace time.Duration
	// LongWait, if positive, reports each wait that lasts longer without
	// progress: a wait for a lock whose holder is tracked counts from
	// when the monitor last saw the lock change hands.
	LongWait time.Duration
	// ExitedAfter, if positive, checks once whether the holder of a lock
	// waited on that long has exited.
	ExitedAfter time.Duration
	// DumpEvery rate-limits the goroutine dumps the monitor takes.
	DumpEvery time.Duration
	// Report is called with each finding, with no lock of this package
	// held, on a goroutine of its own for each look that found something:
	// a Report that blocks holds up no later finding. Nil turns the
	// monitor off.
	Report func(Finding)
}

// FindingKind says what a Finding is.
type FindingKind int

// The findings of the monitor.
const (
	// Deadlock: Waits form a cycle, each needing the next one's goroutine.
	Deadlock FindingKind = iota + 1
	// LongWait: Waits[0] has lasted longer than Settings.LongWait.
	LongWait
	// HeldByExited: Waits[0] is for a lock whose holder has exited.
	HeldByExited
)

// Finding is one thing the monitor found.
type Finding struct {
	Kind  FindingKind
	Waits []*Wait
	// Graph is the snapshot it was found in, and Dump the goroutines'
	// states (nil if none could be had).
	Graph *Graph
	Dump  *Dump
	// Holder is, for HeldByExited, the exited goroutine holding the lock.
	Holder int64
}

// Standing reports whether what f found still stands: for a deadlock,
// every wait of the cycle is still its goroutine's current wait; for a
// lock held by an exited goroutine, that goroutine still holds it; a long
// wait, once long, stays found. The monitor delivers findings on a
// goroutine of their own, so a cycle broken from outside (any goroutine
// may Unlock a Mutex) between the look and the delivery is no deadlock: a
// caller acting on f checks it last.
func (f Finding) Standing() bool {
	switch f.Kind {
	case Deadlock:
		for _, w := range f.Waits {
			if Lookup(w.Goroutine) != w {
				return false
			}
		}
	case HeldByExited:
		return f.Waits[0].Holder() == f.Holder
	}
	return true
}

// The bits of Wait.seen.
const (
	seenDeadlock = 1 << iota
	seenLong
	seenExited
)

var (
	settings atomic.Pointer[Settings]
	running  atomic.Bool
	// cands maps a cycle's key to when it was first seen; only the
	// monitor's goroutine touches it.
	candMu sync.Mutex
	cands  = map[string]int64{}
)

// Configure sets the monitor's settings.
func Configure(s Settings) {
	settings.Store(&s)
	if Len() > 0 {
		wake()
	}
}

// wake starts the monitor if it is not running. It is called when a wait
// is registered, so the monitor runs while any wait may be.
func wake() {
	if running.Load() {
		return
	}
	s := settings.Load()
	if s == nil || s.Report == nil || s.Tick <= 0 {
		return
	}
	if running.CompareAndSwap(false, true) {
		time.AfterFunc(s.Tick, tick)
	}
}

// tick is one look at the waits; it schedules the next while waits remain.
func tick() {
	if s := settings.Load(); s != nil && s.Report != nil {
		scan(s)
	}
	s := settings.Load()
	if Len() > 0 && s != nil && s.Report != nil && s.Tick > 0 {
		time.AfterFunc(s.Tick, tick)
		return
	}
	running.Store(false)
	if Len() > 0 {
		wake() // a wait registered after the count was read
	}
}

// scan looks at the waits once and reports what it finds, with no lock
// held.
func scan(s *Settings) {
	candMu.Lock()
	found, next := scanWith(s, Snapshot(), cands)
	cands = next
	candMu.Unlock()
	if len(found) > 0 {
		go func() {
			for _, f := range found {
				s.Report(f)
			}
		}()
	}
}

// scanWith returns what g shows under s, and the cycles still waiting out
// their grace period.
func scanWith(s *Settings, g *Graph, prev map[string]int64) (found []Finding, next map[string]int64) {
	now := mono.Now()
	next = map[string]int64{}
	for _, c := range g.Cycles() {
		key := cycleKey(c)
		first, ok := prev[key]
		if !ok {
			first = now
		}
		if time.Duration(now-first) < s.Grace {
			next[key] = first
			continue
		}
		if mark(c, seenDeadlock) {
			found = append(found, Finding{Kind: Deadlock, Waits: c, Graph: g})
		}
	}
	var dumpFor []*Wait // waits whose report needs the goroutines' states
	for _, w := range g.Waits() {
		age := time.Duration(now - w.start)
		if s.LongWait > 0 && w.stuckFor(now) >= s.LongWait && w.seen.Load()&seenLong == 0 {
			dumpFor = append(dumpFor, w)
			continue
		}
		if s.ExitedAfter > 0 && age >= s.ExitedAfter && w.seen.Load()&seenExited == 0 && w.IsLock() {
			if h := w.Holder(); h != 0 && g.Wait(h) == nil {
				dumpFor = append(dumpFor, w)
			}
		}
	}
	var d *Dump
	if len(found) > 0 || len(dumpFor) > 0 {
		if len(found) > 0 {
			d = Fresh() // a deadlock is rare: its stacks must be those of now
		} else if d = Cached(s.DumpEvery); d == nil && canDump(s.DumpEvery) {
			d = Recent(s.DumpEvery)
		}
	}
	for i := range found {
		found[i].Dump = d
	}
	if d != nil {
		for _, w := range dumpFor {
			h := w.Holder()
			exited := w.IsLock() && h != 0 && g.Wait(h) == nil && d.Exited(h)
			if exited && mark([]*Wait{w}, seenExited) {
				found = append(found, Finding{Kind: HeldByExited, Waits: []*Wait{w}, Graph: g, Dump: d, Holder: h})
			}
			w.seen.Or(seenExited)
			if s.LongWait > 0 && w.stuckFor(now) >= s.LongWait && mark([]*Wait{w}, seenLong) {
				found = append(found, Finding{Kind: LongWait, Waits: []*Wait{w}, Graph: g, Dump: d})
			}
		}
	}
	return found, next
}

// stuckFor returns how long w has waited without progress at mono reading
// now: for a lock whose holder is tracked, since the monitor last saw the
// lock change hands (a waiter in a queue that moves is contended, not
// stuck); for any other wait, since it began. Called by the monitor only.
func (w *Wait) stuckFor(now int64) time.Duration {
	if !w.IsLock() || !w.HolderKnown {
		return time.Duration(now - w.start)
	}
	m := w.Lock.Moves()
	switch {
	case w.quiet == 0:
		w.quiet, w.moves = w.start, m
	case m != w.moves:
		w.quiet, w.moves = now, m
	}
	return time.Duration(now - w.quiet)
}

var lastDump atomic.Int64

// canDump reports whether the monitor may take a dump now: at most one
// per every.
func canDump(every time.Duration) bool {
	now := mono.Now()
	last := lastDump.Load()
	if last != 0 && time.Duration(now-last) < every {
		return false
	}
	return lastDump.CompareAndSwap(last, now)
}

// mark sets bit in every wait of ws, and reports whether it was clear in
// all of them.
func mark(ws []*Wait, bit uint32) bool {
	fresh := true
	for _, w := range ws {
		if w.seen.Or(bit)&bit != 0 {
			fresh = false
		}
	}
	return fresh
}

// cycleKey identifies a cycle by its waits, wherever it starts.
func cycleKey(c []*Wait) string {
	keys := make([]string, len(c))
	for i, w := range c {
		keys[i] = fmt.Sprintf("%d@%d", w.Goroutine, w.start)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}
