//go:build !syncwatch_off

package lockorder

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/internal/report"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// The wait-for graph's side of lockorder: registering lock waits, and
// turning what internal/waitfor's monitor finds into violations.

// How the monitor looks at waits. The grace period is how long a cycle of
// waits must last before it is a deadlock: any goroutine may Unlock a
// Mutex, so one outside the cycle could still break it.
const (
	monitorTick     = 100 * time.Millisecond
	deadlockGrace   = 2 * time.Second
	exitedAfter     = time.Second
	dumpEvery       = time.Second
	recheckEvery    = 10 * time.Second
	defaultLongWait = 5 * time.Second
)

// applyMonitor sets the monitor's settings from c under mode word w.
func applyMonitor(c *config, w uint32) {
	s := waitfor.Settings{Tick: monitorTick, Grace: deadlockGrace, DumpEvery: dumpEvery, Recheck: recheckEvery,
		KeepLooking: testAlarm, Report: reportFinding}
	switch Mode(w & modeMask) {
	case ModeOff:
		s.Report = nil
	case ModeCheck:
		s.ExitedAfter = exitedAfter
		s.LongWait = defaultLongWait
	}
	if c.longWaitSet {
		s.LongWait = c.longWait
	}
	if c.grace > 0 {
		s.Grace = c.grace
	}
	waitfor.Configure(s)
}

// testAlarm reports whether the program is a test binary whose tests have
// a timeout: its alarm is a timer, which keeps the runtime from ever
// finding every goroutine asleep, so the monitor looks on (see
// waitfor.Settings.KeepLooking).
func testAlarm() bool {
	if !underTest() {
		return false
	}
	f := flag.Lookup("test.timeout")
	return f == nil || f.Value.String() != "0s"
}

// beginLockWait registers gs's goroutine (nil: the caller, untracked) as
// blocked on l. In ModeCheck the holder of l is known, and the locks the
// goroutine holds are listed, but for its newest entry: the pending
// acquisition of l itself.
func beginLockWait(gs *held.G, gid int64, l *class.Lock, read, bounded bool, start int64) *waitfor.Wait {
	w := &waitfor.Wait{Goroutine: gid, Kind: waitfor.KindLock, ObjectID: l.ID, Lock: l, Bounded: bounded}
	if read {
		w.Kind = waitfor.KindRLock
	}
	if gs != nil {
		w.HolderKnown = true
		w.Holds = holdsOf(gs, 1)
		if gs.HasProving() {
			if es := gs.Into(l); len(es) > 0 {
				w.Held = es // taken if the wait is proved a deadlock (R23)
			}
		}
	}
	return waitfor.BeginAt(w, start)
}

// holdsOf lists the valid holds of gs but its newest skip entries.
func holdsOf(gs *held.G, skip int) []waitfor.Hold {
	ents := gs.Entries()
	ents = ents[:max(0, len(ents)-skip)]
	var out []waitfor.Hold
	for i := range ents {
		if e := &ents[i]; gs.Valid(e) {
			out = append(out, waitfor.Hold{Lock: e.Lock, Read: e.Read, Gen: e.Gen})
		}
	}
	return out
}

// reportFinding turns a finding of the monitor into a violation, and
// carries out the deadlock action. It runs on the monitor's goroutine.
func reportFinding(f waitfor.Finding) {
	if loadMode() == ModeOff {
		return
	}
	// The configuration the finding is acted on under, read before the
	// finding is checked to stand: a deadlock still standing after this
	// read was a deadlock while this configuration was in force.
	c := cfg.Load()
	if !f.Standing() {
		// The cycle was broken, or the lock given up, by a goroutine
		// outside it since the monitor looked: not a deadlock, and no
		// evidence that an exited goroutine kept the lock.
		return
	}
	var v Violation
	switch f.Kind {
	case waitfor.Deadlock:
		v = deadlockViolation(f)
	case waitfor.Leaked:
		// Blocked for good, and holding up neither a test nor main:
		// leaked goroutines, which the program goes on without, as it
		// would with sync. Reported as the exit check reports them, under
		// the same keys, and not acted on (RULES.md W2).
		for _, w := range f.Waits {
			publishFromMonitor(leakViolation(w.Goroutine, f.Graph, f.Dump))
		}
		return
	case waitfor.Blocked:
		v = blockedViolation(f)
	case waitfor.LongWait:
		w := f.Waits[0]
		v = waitViolation(KindLongWait, f, longWaitWhat(w.Age(), waitfor.Describe(w)))
		v.Detail += suspicion(f)
		noteSlowWait(v.Key, w)
	case waitfor.HeldByExited:
		w := f.Waits[0]
		v = waitViolation(KindHeldByExited, f, exitedHolderWhat(waitfor.Describe(w), f.Holder))
		v.Detail += "\n" + heldAt(f.Holder, w.Lock.Note(), w.Lock)
	default:
		return
	}
	if f.Proof() != "" && !f.Conclusive() {
		// A deadlock unless a timer or outside input wakes a goroutine
		// (rule W1): a guess, followed as a long-wait is (W6), and never
		// acted on. Under the harness, which prints reports in full when
		// the tests end, it is printed now: a test it hangs may end only
		// at go test's -timeout.
		v.Key += ":evidence" // apart from the same waits' proof, if it comes
		for _, w := range f.Waits {
			noteSlowWait(v.Key, w)
		}
		if f.Kind == waitfor.HeldByExited {
			v.Detail += "\n" + proofLine(f.Proof(), false)[1:]
		}
		v.Detail += "\n" + inconclusiveNote
		if c.handler == nil && report.Harness() {
			v.printNow = true
		}
	}
	if f.Kind == waitfor.Deadlock {
		provedByDeadlock(f, v.Key) // its cycles before it
	}
	publishFromMonitor(v)
	if f.Conclusive() && (v.Kind == KindDeadlock || v.Kind == KindRecursiveLock) {
		actOnDeadlock(c, v)
	}
}

// provedByDeadlock adds the order edges that waited on the goroutines of
// a deadlock f for their own releases (RULES.md R23): the proof says that
// none of them will release anything, so each holds its locks, its own,
// across the wait for good, as a release by itself would have shown. The
// cycles they close are reported before the deadlock, as they would have
// been had the goroutines once got through. On evidence that is not proof
// (W1), a hold may yet be handed off (a timer unlocks it): the cycles are
// then guesses too, kept apart under keys of their own and followed with
// the deadlock's record, key, so that they are expected, not failing, once
// its waits end; under the harness they are printed at once.
func provedByDeadlock(f waitfor.Finding, key string) {
	if f.Proof() == "" {
		return
	}
	var vs []Violation
	eng.mu.Lock()
	for _, w := range f.Waits {
		if es, ok := w.Held.([]held.Edge); ok {
			// Only the holds still standing: one released for the
			// goroutine since it began to wait was not its own.
			es = slices.DeleteFunc(slices.Clone(es), func(e held.Edge) bool { return !e.Live() })
			vs = addWaited(w.Goroutine, es, vs)
		}
	}
	eng.mu.Unlock()
	guess := !f.Conclusive()
	for _, v := range vs {
		if guess {
			v.Key += ":evidence"
			followAs(v.Key, key)
			v.Detail += "\n" + evidenceOrderNote
			v.printNow = cfg.Load().handler == nil && report.Harness()
		}
		publishFromMonitor(v)
	}
}

// suspicion says, for a long wait f, what the monitor suspects and could
// not prove: a cycle of waits (any goroutine outside it may still Unlock
// one of its locks), or a holder that exited (any goroutine may still
// Unlock the lock it left).
func suspicion(f waitfor.Finding) string {
	s := ""
	if c := f.Cycle; len(c) > 0 {
		s = likelyDeadlock(links(c))
	}
	if f.Holder != 0 {
		s += likelyExitedHolder(f.Holder)
	}
	return s
}

// links says, for each wait of the cycle c, what it waits for, held by
// (or related to) the next wait's goroutine.
func links(c []*waitfor.Wait) []string {
	out := make([]string, len(c))
	for i, w := range c {
		out[i] = waitLink(w.Goroutine, waitfor.Describe(w), waitfor.Relation(w), c[(i+1)%len(c)].Goroutine)
	}
	return out
}

// blockedViolation reports waits the runtime proved blocked for good,
// outside any cycle of waits: what each waits for, who holds it, and what
// each holds.
func blockedViolation(f waitfor.Finding) Violation {
	w := f.Waits[0]
	v := Violation{
		Kind:      KindDeadlock,
		Time:      time.Now(),
		Goroutine: w.Goroutine,
		Waited:    w.Age(),
		Holder:    w.Holder(),
	}
	var parts, key []string
	var detail strings.Builder
	for _, x := range f.Waits {
		if x.Lock != nil {
			v.Locks = append(v.Locks, ref(x.Lock))
		}
		key = append(key, fmt.Sprintf("%s/%d/%d", x.Kind, x.ObjectID, x.Goroutine))
		parts = append(parts, blockedPart(x.Goroutine, waitfor.Describe(x), x.Holder()))
		detail.WriteString(blockedDetailLine(x.Goroutine, f.Graph.Explain(x, f.Dump), holdNames(x)))
		detail.WriteString(exitedReaders(x))
		detail.WriteString("\n")
		if r, ok := routine(f.Dump, x.Goroutine); ok {
			detail.WriteString(r.String())
		}
		detail.WriteString("\n")
	}
	v.Stack, _ = routine(f.Dump, w.Goroutine)
	if v.Holder != 0 {
		v.HolderStack, _ = routine(f.Dump, v.Holder)
	}
	v.Message = blockedMessage(parts)
	v.Detail = strings.TrimRight(detail.String(), "\n") + proofLine(f.Proof(), f.Conclusive())
	slices.Sort(key)
	v.Key = string(KindDeadlock) + ":blocked:" + strings.Join(key, ",")
	return v
}

// actOnDeadlock carries out the deadlock action of c, the configuration
// read before v was published: under DeadlockPanic, a panic with the report
// (or, if the default handler has just printed it in full, with its
// summary).
func actOnDeadlock(c *config, v Violation) {
	if c.deadlockAction != DeadlockPanic {
		return
	}
	switch {
	case c.handler == nil && report.Harness():
		// The harness would print the reports in full when the tests end,
		// which they now never will: print them here.
		for _, r := range Violations() {
			if !r.Expected {
				fmt.Fprintln(os.Stderr, r.String())
			}
		}
		fallthrough
	case c.handler == nil:
		panic(deadlockPanic(v.Message))
	}
	panic(strings.TrimRight(v.String(), "\n"))
}

// publishFromMonitor publishes v from the monitor's goroutine, which has
// no caller for a handler's panic to reach: the panic is printed and the
// monitor goes on.
func publishFromMonitor(v Violation) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "lockorder: the violation handler panicked on a %s report: %v\n", v.Kind, p)
		}
	}()
	publish(v)
}

// deadlockViolation reports a cycle of waits.
func deadlockViolation(f waitfor.Finding) Violation {
	c := f.Waits
	first := c[0]
	v := Violation{
		Kind:      KindDeadlock,
		Time:      time.Now(),
		Goroutine: first.Goroutine,
		Waited:    first.Age(),
	}
	var key []string
	var detail strings.Builder
	for i, w := range c {
		next := c[(i+1)%len(c)]
		key = append(key, fmt.Sprintf("%s/%d/%d", w.Kind, w.ObjectID, w.Goroutine))
		if w.Lock != nil {
			v.Locks = append(v.Locks, ref(w.Lock))
		}
		detail.WriteString(deadlockDetailLine(w.Goroutine, w.Age(), waitfor.Describe(w), waitfor.Relation(w), next.Goroutine, holdNames(w)))
		detail.WriteString("\n")
		if r, ok := routine(f.Dump, w.Goroutine); ok {
			detail.WriteString(r.String())
		}
		detail.WriteString("\n")
	}
	slices.Sort(key)
	v.Key = string(KindDeadlock) + ":" + strings.Join(key, ",")
	v.Message = deadlockMessage(links(c), f.Proof() == "" || f.Conclusive())
	v.Detail = strings.TrimRight(detail.String(), "\n") + proofLine(f.Proof(), f.Conclusive())
	if len(c) == 1 && first.IsLock() && first.Holder() == first.Goroutine {
		// A goroutine waiting for a lock it holds for writing.
		v.Kind = KindRecursiveLock
		v.Message = recursiveBlockedMessage(first.Goroutine, first.Lock.Name(), first.Kind == waitfor.KindRLock, f.Proof() == "" || f.Conclusive())
		v.Key = string(KindRecursiveLock) + ":" + strings.Join(key, ",")
		v.Stack, _ = routine(f.Dump, first.Goroutine)
	}
	return v
}

// exitedReaders says, for a write-lock wait w on a lock no goroutine
// holds for writing, which goroutines that have exited still hold it for
// reading: a reader's RUnlock lost on an early return, which the wait-for
// graph cannot name (read holds are anonymous to it). It takes a goroutine
// dump of its own, after listing the goroutines' states, as
// held.DeadHolds requires; only such waits, once reported, pay for it.
func exitedReaders(w *waitfor.Wait) string {
	if w.Kind != waitfor.KindLock || !w.HolderKnown || w.Holder() != 0 {
		return ""
	}
	states := gls.States()
	d := waitfor.Fresh()
	var b strings.Builder
	for _, h := range held.DeadHolds(states, d.Exited) {
		if h.Entry.Lock == w.Lock && h.Entry.Read {
			b.WriteString(exitedReader(w.Lock.Name(), h.Goroutine))
		}
	}
	return b.String()
}

// holdNames lists the locks a waiting goroutine holds.
func holdNames(w *waitfor.Wait) string {
	var names []string
	for _, h := range w.Holds {
		if !h.Valid(w.Goroutine) {
			continue
		}
		n := h.Lock.Name()
		switch {
		case h.Lock.Kind.Counts():
			n = countedHold(n)
		case h.Lock.Kind == kind.Once:
			n = onceHold(n)
		case h.Read:
			n = readHold(n)
		}
		names = append(names, n)
	}
	return holdList(names)
}

// routine returns goroutine id's stack as d shows it.
func routine(d *waitfor.Dump, id int64) (Stack, bool) {
	if d == nil {
		return nil, false
	}
	r, ok := d.Routine(id)
	if !ok {
		return nil, false
	}
	return framesOf(r.Frames), true
}

func framesOf(fs []stack.Frame) Stack {
	out := make(Stack, len(fs))
	for i, f := range fs {
		out[i] = Frame(f)
	}
	return out
}

// waitViolation reports one wait: a long one, or one on a lock left by an
// exited goroutine.
func waitViolation(kind Kind, f waitfor.Finding, what string) Violation {
	w := f.Waits[0]
	v := Violation{
		Kind:      kind,
		Time:      time.Now(),
		Goroutine: w.Goroutine,
		Waited:    w.Age(),
		Holder:    w.Holder(),
	}
	if w.Lock != nil {
		v.Locks = []LockRef{ref(w.Lock)}
	}
	v.Stack, _ = routine(f.Dump, w.Goroutine)
	if v.Holder != 0 {
		v.HolderStack, _ = routine(f.Dump, v.Holder)
	}
	v.Message = waitMessage(w.Goroutine, what)
	v.Detail = waitDetail(w.Goroutine, f.Graph.Explain(w, f.Dump), holdNames(w)) + exitedReaders(w)
	// One report per place in the code, whatever lock instance, holder
	// or test: a fresh group per request that many goroutines wait on
	// long is one finding, its occurrences counted.
	top := ""
	if len(v.Stack) > 0 {
		top = v.Stack[0].String()
	}
	code := w.Name()
	if w.Class != "" {
		code = w.Class // a Once's or a WaitGroup's: not the instance
	}
	if w.Lock != nil {
		code = "-" // a zero-value lock: its place is the line below
		if b := w.Lock.Label(); b.Class.Named {
			code = b.ClassName()
		}
	}
	v.Key = fmt.Sprintf("%s:%s:%s:%s", kind, w.Kind, code, top)
	v.instance = fmt.Sprintf("%d:%d", w.Goroutine, w.ObjectID)
	v.Instances = 1
	return v
}
