package waitfor

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/bubble"
	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/mono"
)

// Settings configure the monitor, which looks at the registered waits
// every Tick while a report may still come of them, and arms no timer
// otherwise (so it is no goroutine and no timer of the program's while
// nothing can change: rule W5 of docs/RULES.md).
type Settings struct {
	// Tick is how often the monitor looks.
	Tick time.Duration
	// Grace is how long a cycle of waits must last before the monitor
	// looks for evidence that it is a deadlock.
	Grace time.Duration
	// LongWait, if positive, reports each wait that lasts longer without
	// progress: a wait for a lock whose holder is tracked counts from
	// when the monitor last saw the lock change hands. Cond waits are
	// idle, never long by themselves. It is also when the monitor first
	// asks the runtime whether a wait is blocked for good.
	LongWait time.Duration
	// ExitedAfter, if positive, checks once whether the holder of a lock
	// waited on that long has exited.
	ExitedAfter time.Duration
	// DumpEvery rate-limits the evidence the monitor gathers (a goroutine
	// dump, and the runtime's leak detection where it has one).
	DumpEvery time.Duration
	// Recheck caps the time between two looks for evidence about one
	// suspicion that is not proven yet: they back off from Grace,
	// doubling, up to Recheck.
	Recheck time.Duration
	// KeepLooking keeps the monitor looking when every goroutine is
	// blocked. Without it the monitor then reports what it can and arms
	// no timer, so that the runtime's own deadlock detection ends the
	// program as it would with sync; under go test the test's timeout
	// alarm keeps that detection from ever firing, and looking on is
	// better.
	KeepLooking func() bool
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
	// Deadlock: Waits form a cycle, each needing the next one's goroutine,
	// and the evidence (see Finding.Proof) shows every one of them
	// blocked: for good if Finding.Conclusive.
	Deadlock FindingKind = iota + 1
	// LongWait: Waits[0] has lasted longer than Settings.LongWait. Cycle,
	// if not nil, is a cycle of waits it is in, not proven a deadlock.
	LongWait
	// HeldByExited: Waits[0] is for a lock whose holder has exited, and
	// the evidence shows the wait blocked: for good if
	// Finding.Conclusive.
	HeldByExited
	// Blocked: the runtime proved Waits blocked for good, outside any
	// cycle of waits, and they hold the program up (Dump.holdsUp).
	Blocked
	// Leaked: the runtime proved Waits blocked for good, outside any
	// cycle of waits, and they hold nothing up: leaked goroutines, which
	// the program goes on without (docs/RULES.md W2). Each is found once,
	// and asked about no more.
	Leaked
)

// Finding is one thing the monitor found.
type Finding struct {
	// Kind is what was found: Deadlock, LongWait, HeldByExited, Blocked
	// or Leaked.
	Kind FindingKind
	// Waits are the waits it is about: a cycle's, in order, for a
	// Deadlock; those proven blocked for good for a Blocked or a Leaked;
	// the one wait for a LongWait or a HeldByExited.
	Waits []*Wait
	// Cycle is, for a LongWait, a cycle of waits that the wait is in, not
	// proven a deadlock.
	Cycle []*Wait
	// Graph is the snapshot it was found in, and Dump the goroutines'
	// states (nil if none could be had).
	Graph *Graph
	Dump  *Dump
	// evidence is what proved a Deadlock, HeldByExited or Blocked (see
	// Proof).
	evidence *evidence
	// Holder is, for HeldByExited, the exited goroutine holding the lock;
	// for a LongWait, the holder of the lock waited for if it had exited.
	Holder int64
}

// Standing reports whether what f found still stands: for a deadlock or a
// wait blocked for good, every wait named is still its goroutine's
// current wait; for a lock held by an exited goroutine, that goroutine
// still holds it; a long wait, once long, stays found. The monitor
// delivers findings on a goroutine of their own, so a cycle broken from
// outside (any goroutine may Unlock a Mutex) between the look and the
// delivery is no deadlock: a caller acting on f checks it last.
func (f Finding) Standing() bool {
	switch f.Kind {
	case Deadlock:
		for _, w := range f.Waits {
			if Lookup(w.Goroutine) != w {
				return false
			}
		}
	case Blocked, Leaked:
		return Lookup(f.Waits[0].Goroutine) == f.Waits[0] // the others are proven
	case HeldByExited:
		return f.Waits[0].Holder() == f.Holder
	}
	return true
}

// askMax caps the back-off between two asks of the runtime about waits it
// does not find blocked for good (each ask is a garbage collection).
const askMax = 5 * time.Minute

// The bits of Wait.seen.
const (
	seenDeadlock = 1 << iota
	seenLong
	seenExited
	// seenEvidence: reported as a deadlock on evidence that is not proof
	// (every goroutine blocked, W1), and still looked into while the
	// runtime's leak detection may prove it.
	seenEvidence
)

// A suspect is a cycle of waits not yet proven a deadlock.
type suspect struct {
	first int64         // when it was first seen (mono)
	at    int64         // when to look for evidence next
	gap   time.Duration // how long the last look waited for the next
}

var (
	settings atomic.Pointer[Settings]
	running  atomic.Bool
	// rewake is set by each wake, before it looks at running, and
	// cleared by tick before it looks at the waits: a wait registered
	// while a look that could not see it was ending makes tick start
	// another (see tick).
	rewake atomic.Bool
	// timer runs tick, once armed (see arm); timerMu guards it.
	timerMu sync.Mutex
	timer   *time.Timer
	// candMu guards suspects and the monitor's fields of the waits; only
	// the monitor's goroutine takes it.
	candMu   sync.Mutex
	suspects = map[string]*suspect{}
	// blockedSince is when the monitor's looks first found every
	// goroutine blocked, through the latest look (0: the latest did not).
	blockedSince int64
	// nextProbe is when a look for evidence is next due outside tests,
	// for rule W5, and probeGap the back-off; only the monitor touches
	// them.
	nextProbe int64
	probeGap  time.Duration
)

// arm makes the monitor's timer fire tick after d. It is never called
// from a testing/synctest bubble (see wake): a timer made there would run
// on the bubble's fake clock, inside it, and keep the bubble from ever
// looking idle; and resetting one made outside from there would count
// from the fake clock. A timer that has fired, or was never made, is not
// pending: only an armed one keeps the runtime from seeing every goroutine
// asleep (a stopped one can, until the runtime clears it).
func arm(d time.Duration) {
	timerMu.Lock()
	defer timerMu.Unlock()
	if timer == nil {
		timer = time.AfterFunc(d, tick)
		return
	}
	timer.Reset(d)
}

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
	rewake.Store(true) // before running is read: see tick
	if running.Load() {
		return
	}
	s := settings.Load()
	if s == nil || s.Report == nil || s.Tick <= 0 {
		return
	}
	if running.CompareAndSwap(false, true) {
		if bubble.In() {
			// A cleanup arms it from outside: only the first wait of a
			// bubble after the monitor went idle pays a collection.
			bubble.Later(func() { arm(s.Tick) })
			return
		}
		arm(s.Tick)
	}
}

// tick is one look at the waits; it schedules the next while a report may
// still come of them.
func tick() {
	rewake.Store(false) // the look below sees the waits registered so far
	pending := false
	if s := settings.Load(); s != nil && s.Report != nil {
		pending = scan(s)
	}
	s := settings.Load()
	if pending && Len() > 0 && s != nil && s.Report != nil && s.Tick > 0 {
		arm(s.Tick)
		return
	}
	running.Store(false)
	// After the store: a wake that found running still set stored
	// rewake first, and is seen here; one that comes later finds running
	// clear and starts the monitor itself. Without this, a wait
	// registered while this look was ending was never looked at.
	if (pending || rewake.Swap(false)) && Len() > 0 {
		wake() // the settings changed meanwhile, or a wait came
	}
}

// scan looks at the waits once and reports what it finds, with no lock
// held. It reports whether a report may still come of the waits.
func scan(s *Settings) bool {
	candMu.Lock()
	before := gathered.Load()
	found, pending := look(s, Snapshot(), mono.Now())
	inquiry := gathered.Load() != before
	candMu.Unlock()
	switch {
	case len(found) > 0:
		go deliver(s, found, inquiry)
	case inquiry:
		inquiries.Add(1)
	}
	return pending
}

// deliver hands found to s.Report, then counts the look that found it if
// it looked for evidence. Its name is known to allBlocked: a goroutine
// printing a report wakes nobody.
func deliver(s *Settings, found []Finding, inquiry bool) {
	for _, f := range found {
		s.Report(f)
	}
	if inquiry {
		inquiries.Add(1)
	}
}

// gathered counts the evidence gathered (see gather), and inquiries the
// looks that gathered some, once what they found is delivered.
var gathered, inquiries atomic.Uint64

// Inquiries returns how many of the monitor's looks have gathered
// evidence about the waits (a goroutine dump: are they blocked for
// good?) and delivered what they found. A test waits for it to grow,
// rather than sleeping past the grace period, to know that the monitor
// has looked into the waits it has registered and has reported them if
// it found them a deadlock.
func Inquiries() uint64 { return inquiries.Load() }

// look returns what g shows under s at mono reading now, and whether a
// report may still come of its waits. Called with candMu held.
func look(s *Settings, g *Graph, now int64) (found []Finding, pending bool) {
	// Suspects: cycles of waits, each looked into once its grace is over,
	// then again, backing off, until proven or broken.
	cycles := g.Cycles()
	next := make(map[string]*suspect, len(cycles))
	inCycle := map[int64][]*Wait{}
	var due [][]*Wait
	for _, c := range cycles {
		key := cycleKey(c)
		sp := suspects[key]
		if sp == nil {
			sp = &suspect{first: now, at: now + int64(s.Grace), gap: s.Grace}
		}
		next[key] = sp
		for _, w := range c {
			inCycle[w.Goroutine] = c
		}
		if allSeen(c, seenDeadlock) {
			continue
		}
		pending = true
		if now >= sp.at {
			due = append(due, c)
		}
	}
	suspects = next

	// Single waits: long ones, ones on a lock whose holder exited, and
	// (where the runtime can prove it) ones blocked for good.
	leaks := s.LongWait > 0 && leak.Supported()
	var longs, exits, asks []*Wait
	for _, w := range g.Waits() {
		seen := w.seen.Load()
		if seen&seenDeadlock != 0 {
			continue
		}
		if leaks && !w.Bounded {
			pending = true
			if w.ask == 0 {
				w.ask, w.gap = w.start+int64(s.LongWait), s.LongWait
			}
			if now >= w.ask {
				asks = append(asks, w)
			}
		}
		if s.LongWait > 0 && seen&seenLong == 0 && w.Kind != KindCond {
			pending = true
			if w.stuckFor(now) >= s.LongWait {
				longs = append(longs, w)
			}
		}
		if s.ExitedAfter > 0 && seen&seenExited == 0 && w.IsLock() {
			if h := w.Holder(); h != 0 && g.Wait(h) == nil {
				pending = true
				if time.Duration(now-w.start) >= s.ExitedAfter && now >= w.exitAt {
					exits = append(exits, w)
				}
			}
		}
	}
	keepLooking := s.KeepLooking != nil && s.KeepLooking()
	// Outside tests, a look for evidence is also due, backing off, while
	// a wait has lasted the grace period and a report is still to come of
	// it: if every goroutine is blocked for good, the monitor must stop
	// arming its timer (rule W5) even if a long-wait bound or a leak check
	// is far off.
	probe := false
	if pending && !keepLooking && now >= nextProbe {
		for _, w := range g.Waits() {
			if time.Duration(now-w.start) >= s.Grace {
				probe = true
				break
			}
		}
	}
	if len(due) == 0 && len(longs) == 0 && len(exits) == 0 && len(asks) == 0 && !probe {
		return nil, pending
	}
	if !canDump(s.DumpEvery) {
		return nil, true // looked into too recently: next tick
	}
	e := gather(g, keepLooking)
	probeGap = min(max(2*probeGap, s.Grace), max(s.Recheck, s.Grace))
	nextProbe = now + int64(probeGap)
	switch {
	case !e.allBlocked:
		blockedSince = 0
	case blockedSince == 0:
		blockedSince = now
		probeGap, nextProbe = s.Grace, now+int64(s.Grace) // look again when it is evidence
	}
	// Every goroutine blocked is evidence once it has lasted the grace
	// period across looks: a goroutine that a timer was about to wake,
	// to unlock a lock it was handed, has had that long (rule W1).
	stable := e.allBlocked && time.Duration(now-blockedSince) >= s.Grace
	proven := func(w *Wait) bool { return stable || e.leaked(w.Goroutine) }

	for _, c := range due {
		if !all(c, proven) {
			sp := suspects[cycleKey(c)]
			switch {
			case e.allBlocked:
				sp.at = blockedSince + int64(s.Grace) // look again when it is evidence
			case e.busy:
				sp.at = now + int64(s.DumpEvery) // caught running: soon
			default:
				sp.gap = min(2*sp.gap, max(s.Recheck, s.Grace))
				sp.at = now + int64(sp.gap)
			}
			continue
		}
		f := Finding{Kind: Deadlock, Waits: c, Graph: g, Dump: e.dump, evidence: e}
		if f.Conclusive() || !e.leaks {
			// Proved, or as proved as it can be: a later look would
			// bring no proof (W1).
			if settle(c) {
				found = append(found, f)
			}
			continue
		}
		// Evidence, not proof, where the runtime's leak detection runs:
		// reported once, then looked into again, backing off as the
		// runtime's single asks do (each look is a collection and a
		// dump), until it proves it (a timer that reached its locks has
		// fired) or the cycle is broken.
		fresh := mark(c, seenEvidence)
		mark(c, seenLong|seenExited)
		if fresh {
			found = append(found, f)
		}
		sp := suspects[cycleKey(c)]
		sp.gap = min(2*max(sp.gap, s.Grace), askMax)
		sp.at = now + int64(sp.gap)
	}
	// The waits the runtime proved blocked for good, outside any cycle,
	// are one finding: they are usually one hang (a Cond waiter holding
	// the lock its signaller waits for), best told together.
	var stuck []*Wait
	for _, w := range asks {
		if w.seen.Load()&seenDeadlock == 0 && inCycle[w.Goroutine] == nil && e.leaked(w.Goroutine) {
			stuck = append(stuck, w)
		}
	}
	switch {
	case len(stuck) == 0:
	case e.dump.holdsUp():
		if settle(stuck) {
			found = append(found, Finding{Kind: Blocked, Waits: stuck, Graph: g, Dump: e.dump, evidence: e})
		}
	default:
		// Leaked, told once and settled: asking about them again, to act
		// if the program later hangs on them, would keep the monitor
		// looking for as long as they last (RULES.md W2, its limit).
		if settle(stuck) {
			found = append(found, Finding{Kind: Leaked, Waits: stuck, Graph: g, Dump: e.dump, evidence: e})
		}
	}
	exited := map[*Wait]int64{}
	for _, w := range exits {
		h := w.Holder()
		if w.seen.Load()&seenDeadlock != 0 || h == 0 || g.Wait(h) != nil || !e.dump.Exited(h) {
			w.seen.Or(seenExited) // checked: the holder was alive
			continue
		}
		exited[w] = h
		if proven(w) && settle([]*Wait{w}) {
			found = append(found, Finding{Kind: HeldByExited, Waits: []*Wait{w}, Graph: g, Dump: e.dump, evidence: e, Holder: h})
		}
	}
	// Waits looked into and not proven are looked into again, backing
	// off; soon if every goroutine was blocked (it is evidence once that
	// has lasted the grace period).
	// One look at the leak marks serves every wait: the waits not proven
	// are asked about again together, backing off to askMax.
	if e.leaks {
		for _, w := range g.Waits() {
			if w.ask != 0 && w.seen.Load()&seenDeadlock == 0 {
				w.gap = min(max(2*w.gap, s.LongWait), askMax)
				w.ask = now + int64(w.gap)
			}
		}
	}
	for _, w := range exits {
		switch {
		case w.seen.Load()&seenDeadlock != 0:
		case e.allBlocked && !stable:
			w.exitAt = blockedSince + int64(s.Grace)
		case e.busy: // caught running: soon
			w.exitAt = now + int64(s.DumpEvery)
		default:
			w.exitGap = min(max(2*w.exitGap, s.Grace), max(s.Recheck, s.Grace))
			w.exitAt = now + int64(w.exitGap)
		}
	}
	for _, w := range longs {
		if w.seen.Load()&seenDeadlock != 0 {
			continue
		}
		h := exited[w]
		if h == 0 {
			if hh := w.Holder(); hh != 0 && g.Wait(hh) == nil && e.dump.Exited(hh) {
				h = hh
			}
		}
		if mark([]*Wait{w}, seenLong) {
			found = append(found, Finding{Kind: LongWait, Waits: []*Wait{w}, Cycle: inCycle[w.Goroutine], Graph: g, Dump: e.dump, Holder: h})
		}
	}
	if stable && !keepLooking {
		// Nothing can wake anyone: what could be proven has been reported,
		// and the runtime's own detection ends the program, as with sync
		// (rule W5).
		pending = false
	}
	return found, pending
}

func all(ws []*Wait, ok func(*Wait) bool) bool {
	for _, w := range ws {
		if !ok(w) {
			return false
		}
	}
	return true
}

func allSeen(ws []*Wait, bit uint32) bool {
	return all(ws, func(w *Wait) bool { return w.seen.Load()&bit != 0 })
}

// stuckFor returns how long w has waited without progress at mono reading
// now (W3): for a lock whose holder is tracked, since the monitor last saw
// the lock change hands (a waiter in a queue that moves is contended, not
// stuck); for a wait with a Count (a WaitGroup), since it last saw the
// count at a new low; for any other wait, since it began. Called by the
// monitor only.
func (w *Wait) stuckFor(now int64) time.Duration {
	if w.Count != nil {
		c := w.moves // gone (its waiter leaked): no new low
		if n, ok := w.Count(); ok {
			c = uint64(max(n, 0))
		}
		switch {
		case w.quiet == 0:
			w.quiet, w.moves = w.start, c
		case c < w.moves:
			w.quiet, w.moves = now, c
		}
		return time.Duration(now - w.quiet)
	}
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

var (
	lastDump atomic.Int64
	// dumpPerG is what a goroutine dump costs per goroutine, in
	// nanoseconds, as learnDumpCost estimates it: a dump stops the world
	// for a time that grows with the goroutines. 0 until one was learnt.
	dumpPerG atomic.Int64
)

// gatherShare bounds the share of the program's time the monitor's looks
// take: a look expected to take d (dumpPerG times the goroutines alive)
// comes gatherShare*d after the last at the earliest, and the first
// gatherShare*d after the monitor first wanted one, but never more than
// maxGap. A program of half a million goroutines, whose dump takes
// seconds, is looked into once a minute, not every second; one of a few
// thousand, as often as Settings.DumpEvery allows (docs/ENGINE.md, the
// monitor).
const gatherShare = 20

// defaultPerG is dumpPerG before any dump was taken.
const defaultPerG = 5 * time.Microsecond

const (
	// minLearn is the fewest goroutines a dump must show to teach its
	// cost per goroutine: a smaller one is mostly a fixed cost, which
	// spread over a few goroutines would make a look of many seem
	// minutes long.
	minLearn = 1000
	// maxGap caps the time between two looks, whatever they cost.
	maxGap = time.Minute
)

// learnDumpCost updates dumpPerG after a dump of n goroutines that took
// took nanoseconds: down at once, up by an eighth of the difference (a
// dump that had to grow its buffer, or ran while the machine was busy,
// costs more than the next), so that the estimate errs low: a look too
// early costs time, one too late delays a report.
func learnDumpCost(n int, took int64) {
	if n < minLearn {
		return
	}
	obs := max(took/int64(n), 1)
	for {
		old := dumpPerG.Load()
		cur := old
		if cur == 0 {
			cur = int64(defaultPerG)
		}
		next := obs
		if obs > cur {
			next = cur + (obs-cur)/8
		}
		if dumpPerG.CompareAndSwap(old, next) {
			return
		}
	}
}

// canDump reports whether the monitor may take a dump now: at most one
// per every, or per gatherShare times what a look would cost if longer.
func canDump(every time.Duration) bool {
	now := mono.Now()
	last := lastDump.Load()
	if last == 0 {
		// The first wanted look: it may come at once, if it is cheap.
		lastDump.CompareAndSwap(0, now-int64(every))
		last = lastDump.Load()
	}
	if time.Duration(now-last) < dumpGap(every, lookCost(runtime.NumGoroutine())) {
		return false
	}
	return lastDump.CompareAndSwap(last, now)
}

// lookCost is what a look is expected to cost with n goroutines alive.
func lookCost(n int) time.Duration {
	per := time.Duration(dumpPerG.Load())
	if per == 0 {
		per = defaultPerG
	}
	return time.Duration(n) * per
}

// dumpGap is the least time between two looks, every being the monitor's
// setting and cost what the next look is expected to take: at most
// maxGap, unless every is longer.
func dumpGap(every, cost time.Duration) time.Duration {
	return max(every, min(gatherShare*cost, maxGap))
}

// settle marks ws proven blocked for good, and reported whatever else
// could be of them, and reports whether none of them was proven before.
func settle(ws []*Wait) bool {
	fresh := mark(ws, seenDeadlock)
	mark(ws, seenLong|seenExited)
	return fresh
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
