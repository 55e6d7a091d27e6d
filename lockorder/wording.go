package lockorder

import (
	"fmt"
	"strings"
	"time"
)

// The words of lockorder's reports: every sentence lockorder puts in a
// Violation's Message and Detail (the flight recorder's note included),
// and the layout String prints. Lock names are internal/class's. The
// functions take plain facts (goroutine ids, lock names, durations); the
// code that gathers the facts is elsewhere. The phrases that name a wait ("lock
// store#1", "held by") and say what proved a deadlock are
// internal/waitfor's, all in its explain.go (Describe, Relation, Explain,
// Finding.Proof). testdata/golden holds one report of each kind
// (TestReportGolden): a change of wording shows there.

// What a bad unlock did, the start of its message.
const (
	unlockOfUnlocked   = "Unlock of unlocked"
	unlockOfReadLocked = "Unlock of read-locked (not write-locked)"
	runlockOfUnlocked  = "RUnlock of unlocked"
)

// A lock-order cycle through the locks named names, in order.
func cycleMessage(names []string) string {
	return fmt.Sprintf("cycle of %d locks: %s -> %s", len(names), strings.Join(names, " -> "), names[0])
}

// Goroutine gid locks (read-locks, if read) the lock named name, which it
// holds already (for reading, if heldRead).
func recursiveMessage(gid int64, name string, heldRead, read bool) string {
	what, how := "locks", "for writing"
	if read {
		what = "read-locks"
	}
	if heldRead {
		how = "for reading"
	}
	return fmt.Sprintf("goroutine %d %s %s, which it already holds %s", gid, what, name, how)
}

// recursiveBlockedMessage is recursiveMessage for a goroutine blocked on
// a lock it holds for writing: for good if sure, else with every other
// goroutine of the program (see inconclusiveNote).
func recursiveBlockedMessage(gid int64, name string, read, sure bool) string {
	return recursiveMessage(gid, name, false, read) + ", and is " + blockedHow(sure)
}

// blockedHow says how a deadlock's goroutines are blocked: for good, on
// conclusive evidence (RULES.md W1), or along with every other goroutine.
func blockedHow(sure bool) string {
	if sure {
		return "blocked for good"
	}
	return "blocked, as is every goroutine of the program"
}

// inconclusiveNote ends a deadlock report made on evidence that a timer or
// outside input could still prove wrong (RULES.md W1).
// evidenceOrderNote ends the report of a cycle whose order a deadlock on
// evidence that is not proof added (RULES.md W1, R23).
const evidenceOrderNote = "An order of this cycle was added by a deadlock seen as every goroutine blocked, not proved: if its waits end (a timer hands a lock off), this report is marked expected, not failing."

const inconclusiveNote = "Not conclusive, so the program goes on as with sync (no deadlock action): if the waits end, this report is marked expected, not failing."

// Goroutine gid locks the lock of kind k at addr, now named name, whose
// former identity, old (of kind oldKind), it holds.
func copiedMessage(gid int64, k string, addr uintptr, old, oldKind, name string) string {
	return fmt.Sprintf("goroutine %d locks the %s at %#x, which shares its identity (%s) with a %s it holds: "+
		"one of the two is a copy of the other, made after New%s or after first use; the %s at %#x is %s from now on",
		gid, k, addr, old, oldKind, k, k, addr, name)
}

// copiedDetail is the detail of a copied-lock report.
const copiedDetail = "go vet's copylocks check shows where a lock value is copied."

// A bad unlock (what: unlockOfUnlocked, ...) of the lock named name.
func badUnlockMessage(what, name string) string { return what + " " + name }

// AssertHeld (AssertRHeld, if read) found the lock named name not held by
// goroutine gid.
func notHeldMessage(gid int64, name string, read bool) string {
	what := "AssertHeld"
	if read {
		what = "AssertRHeld"
	}
	return fmt.Sprintf("%s: goroutine %d does not hold %s", what, gid, name)
}

// Goroutine gid gave up waiting for the lock named name after waited.
func waitTimeoutMessage(gid int64, name string, waited time.Duration) string {
	return fmt.Sprintf("goroutine %d gave up waiting for %s after %v", gid, name, waited.Round(time.Microsecond))
}

// heldByGoroutine is added to a message naming the goroutine that holds the lock.
func heldByGoroutine(holder int64) string { return fmt.Sprintf(", held by goroutine %d", holder) }

// The holder of a lock waited for is itself waiting for what (a
// waitfor.Describe phrase).
func itselfWaiting(holder int64, what string) string {
	return fmt.Sprintf("goroutine %d is itself waiting for %s", holder, what)
}

// Goroutine gid is in state (a waitfor.RoutineState phrase: "has exited",
// "is blocked in ...").
func goroutineState(gid int64, state string) string {
	return fmt.Sprintf("goroutine %d %s", gid, state)
}

// What a goroutine that waits for itself does: calls Do on the Once named
// name inside its function, or Wait on the WaitGroup named name inside a
// function started by its Go.
func doInsideOwnFunction(name string) string {
	return "calls Do on " + name + " inside its own function, which waits for itself"
}

func waitInsideItsGo(name string) string {
	return "calls Wait on " + name + " inside a function started by its Go, which waits for itself"
}

// Goroutine gid waits for itself, doing what (doInsideOwnFunction, ...).
func selfWaitMessage(gid int64, what string) string {
	return fmt.Sprintf("cycle of 1 goroutine blocked for good: goroutine %d %s", gid, what)
}

// goroutines is "goroutine" or "goroutines", for n of them.
func goroutines(n int) string {
	if n == 1 {
		return "goroutine"
	}
	return "goroutines"
}

// One link of a cycle of waits: goroutine gid waits for what, related
// (a waitfor.Relation phrase) to goroutine next.
func waitLink(gid int64, what, relation string, next int64) string {
	return fmt.Sprintf("goroutine %d waits for %s %s goroutine %d", gid, what, relation, next)
}

// A cycle of waits, of its links (waitLink).
func deadlockMessage(links []string, sure bool) string {
	return fmt.Sprintf("cycle of %d %s %s: %s", len(links), goroutines(len(links)), blockedHow(sure), strings.Join(links, "; "))
}

// One link's line of a deadlock report's detail: how long goroutine gid
// has waited, and the locks it holds (holdList), if any.
func deadlockDetailLine(gid int64, waited time.Duration, what, relation string, next int64, holds string) string {
	s := fmt.Sprintf("goroutine %d has waited %v for %s, %s goroutine %d", gid, waited.Round(time.Millisecond), what, relation, next)
	return s + itHolds("; ", holds)
}

// itHolds says, after sep, which locks (holdList) a goroutine holds, if
// any.
func itHolds(sep, holds string) string {
	if holds == "" {
		return ""
	}
	return sep + "it holds " + holds
}

// One wait of waits proven blocked for good: goroutine gid waits for
// what, held by holder (0: no holder known).
func blockedPart(gid int64, what string, holder int64) string {
	s := fmt.Sprintf("goroutine %d waits for %s", gid, what)
	if holder != 0 {
		s += fmt.Sprintf(" held by goroutine %d", holder)
	}
	return s
}

// Waits proven blocked for good outside any cycle, of their parts
// (blockedPart).
func blockedMessage(parts []string) string {
	return fmt.Sprintf("%d %s blocked for good: %s", len(parts), goroutines(len(parts)), strings.Join(parts, "; "))
}

// One wait's line of a blocked report's detail: goroutine gid is
// explained (a waitfor.Explain phrase).
func blockedDetailLine(gid int64, explained, holds string) string {
	return fmt.Sprintf("goroutine %d is %s", gid, explained) + itHolds("; ", holds)
}

// proofLine is the last line of a report that needs evidence: what proved
// it ("proof:"), or, for a conclusion it cannot settle (RULES.md W1),
// what suggests it ("evidence:").
func proofLine(proof string, conclusive bool) string {
	switch {
	case proof == "":
		return ""
	case conclusive:
		return "\nproof: " + proof
	}
	return "\nevidence: " + proof
}

// deadlockPanic is the panic of DeadlockPanic when the default handler
// has printed the report whose message is msg.
func deadlockPanic(msg string) string {
	return "lockorder: deadlock: " + msg + " (the report is above)"
}

// The names of the locks a waiting goroutine holds in a report: a place
// in a WaitGroup (a function started by its Go), the running function of
// a Once (what its write hold is), a read hold.
func countedHold(name string) string { return "a place in " + name }
func onceHold(name string) string    { return "the running function of " + name }
func readHold(name string) string    { return name + " (read)" }

// holdList lists hold names.
func holdList(names []string) string { return strings.Join(names, ", ") }

// Goroutine gid is in a wait, doing what: the message of a report about
// one wait.
func waitMessage(gid int64, what string) string { return fmt.Sprintf("goroutine %d %s", gid, what) }

// waitDetail is the detail of a report about one wait of goroutine gid,
// explained (a waitfor.Explain phrase), which holds holds.
func waitDetail(gid int64, explained, holds string) string {
	return fmt.Sprintf("goroutine %d is %s", gid, explained) + itHolds("\n", holds)
}

// What a long wait did: it has waited for what (a waitfor.Describe
// phrase).
func longWaitWhat(waited time.Duration, what string) string {
	return fmt.Sprintf("has waited %v for %s", waited.Round(time.Millisecond), what)
}

// What a wait for a lock left by an exited goroutine, holder, does.
func exitedHolderWhat(what string, holder int64) string {
	return fmt.Sprintf("waits for %s, held by goroutine %d, which has exited without unlocking it", what, holder)
}

// What a wait still going on at exit does.
func blockedAtExitWhat(waited time.Duration, what string) string {
	return fmt.Sprintf("is still blocked, after %v, in a wait for %s", waited.Round(time.Millisecond), what)
}

// What a leaked goroutine's wait does.
func leakedWhat(what string) string { return "is blocked for good, in a wait for " + what }

// The detail a leaked-goroutine report ends with: why it is one, and
// where the goroutine was started (created: "" if unknown).
func leakedDetail(created string) string {
	s := "the runtime found nothing that can wake it (what it waits on is out of every runnable goroutine's reach)"
	if created != "" {
		s += "\nit was started by " + created
	}
	return s
}

// What a long wait's monitor suspects and could not prove: a cycle of
// waits (of its links, waitLink), or a holder that exited.
func likelyDeadlock(links []string) string {
	return "\nlikely deadlock, not proven: " + strings.Join(links, "; ") +
		" (a goroutine outside the cycle could still unlock one of its locks)"
}

func likelyExitedHolder(holder int64) string {
	return fmt.Sprintf("\nthe lock is held by goroutine %d, which has exited without unlocking it (another goroutine could still unlock it)", holder)
}

// A lock still held for reading by a goroutine, gid, that has exited.
func exitedReader(name string, gid int64) string {
	return fmt.Sprintf("\n%s is held for reading by goroutine %d, which has exited without unlocking it", name, gid)
}

// The message of a lock still held at exit by a goroutine, gid, that has
// exited (for reading, if read), for which waiters goroutines wait.
func heldAtExitMessage(name string, read bool, gid int64, waiters int) string {
	how := ""
	if read {
		how = " for reading"
	}
	msg := fmt.Sprintf("%s is still held%s by goroutine %d, which has exited without unlocking it", name, how, gid)
	if waiters == 0 {
		return msg + "; no goroutine waits for it"
	}
	return msg + fmt.Sprintf("; %d goroutine(s) wait for it", waiters)
}

// Where a hold was taken, as heldStack found it, said of a report whose
// stack above is that place (stackAbove), or of goroutine gid, with the
// stack st after it.
const (
	tookAbove  = "the stack above is where it took the lock"
	firstAbove = "the stack above is where the lock was first taken (the held profile records each hold's place: lockorder.WithHeldProfile(true))"
	noPlace    = "where it was taken is recorded with the held profile on (lockorder.WithHeldProfile(true) or SYNCWATCH_HELD_PROFILE=1)"
)

func tookAt(gid int64, st Stack) string { return fmt.Sprintf("goroutine %d took it at:\n%s", gid, st) }

func firstTakenAt(gid int64, st Stack) string {
	return fmt.Sprintf("goroutine %d took it; the lock was first taken at (the held profile records each hold's place: lockorder.WithHeldProfile(true)):\n%s", gid, st)
}

// The flight recorder's note on a report: the execution trace of the
// window before it is at path; or one was written for an earlier report,
// of kind, ago, and no other is written within the window.
func traceNote(window time.Duration, path string) string {
	return fmt.Sprintf("execution trace of the %v before this report: %s (go tool trace %s)", window, path, path)
}

func traceWrittenNote(ago time.Duration, kind string, window time.Duration, path string) string {
	return fmt.Sprintf("execution trace written %v before this report, for a %s report (at most one per %v): %s",
		ago.Round(time.Millisecond), kind, window, path)
}

// String returns a human report: the summary, the locks, for a cycle each
// edge with its stack and a possible deadlock scenario, and where it
// happened.
func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: %s\n", v.source(), v.Kind, v.Message)
	if v.Instances > 1 {
		in := ""
		if v.Tests > 1 {
			in = fmt.Sprintf(" in %d tests", v.Tests)
		}
		fmt.Fprintf(&b, "seen on %d instances%s; the first is shown\n", v.Instances, in)
	}
	if len(v.Cycle) > 0 {
		for i, e := range v.Cycle {
			fmt.Fprintf(&b, "\n[%d] goroutine %d took %s%s while holding %s%s, at:\n%s",
				i+1, e.Goroutine, e.To, mode(e.ToRead), e.From, mode(e.FromRead), e.Stack)
		}
		b.WriteString("\nPossible deadlock scenario:\n")
		b.WriteString(scenario(v.Cycle))
	}
	if len(v.Stack) > 0 {
		fmt.Fprintf(&b, "\ngoroutine %d at:\n%s", v.Goroutine, v.Stack)
	}
	if v.Holder != 0 {
		fmt.Fprintf(&b, "\nheld by goroutine %d", v.Holder)
		if len(v.HolderStack) > 0 {
			fmt.Fprintf(&b, ", now at:\n%s", v.HolderStack)
		} else {
			b.WriteString("\n")
		}
	}
	if v.Detail != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(v.Detail, "\n"))
	}
	return b.String()
}

func mode(read bool) string {
	if read {
		return " (read)"
	}
	return ""
}

// scenario draws, as lockdep does, how goroutines following the cycle's
// edges at the same time deadlock: each takes its first lock, then each
// blocks on its second.
func scenario(cycle []Edge) string {
	n := len(cycle)
	cols := make([][]string, n)
	for i, e := range cycle {
		cols[i] = make([]string, 2*n)
		cols[i][i] = fmt.Sprintf("%s(%s)", verb(e.FromRead), e.From)
		cols[i][n+i] = fmt.Sprintf("%s(%s)  <- blocks", verb(e.ToRead), e.To)
	}
	width := make([]int, n)
	head := make([]string, n)
	seen := map[int64]int{}
	for _, e := range cycle {
		seen[e.Goroutine]++
	}
	for i, e := range cycle {
		// One goroutine often took every edge (a test that runs both
		// paths); the scenario needs one goroutine per path.
		head[i] = fmt.Sprintf("goroutine %d", e.Goroutine)
		if seen[e.Goroutine] > 1 {
			head[i] = fmt.Sprintf("path %d (goroutine %d)", i+1, e.Goroutine)
		}
		width[i] = len(head[i])
		for _, cell := range cols[i] {
			width[i] = max(width[i], len(cell))
		}
	}
	var b strings.Builder
	if len(seen) == 1 {
		fmt.Fprintf(&b, "    (goroutine %d took every order of the cycle, one after the other, as code\n"+
			"    running each path in turn (a test, say) does: it cannot deadlock with itself.\n"+
			"    Goroutines running these paths at the same time would:)\n\n", cycle[0].Goroutine)
	} else if len(seen) < n {
		b.WriteString("    (a goroutine took more than one order of the cycle, one after the other;\n" +
			"    one goroutine per path at the same time would deadlock:)\n\n")
	}
	row := func(cells func(i int) string) {
		var line strings.Builder
		line.WriteString("    ")
		for i := range n {
			fmt.Fprintf(&line, "%-*s", width[i]+4, cells(i))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteString("\n")
	}
	row(func(i int) string { return head[i] })
	row(func(i int) string { return strings.Repeat("-", len(head[i])) })
	for r := range 2 * n {
		row(func(i int) string { return cols[i][r] })
	}
	b.WriteString("\n    *** DEADLOCK ***\n")
	return b.String()
}

func verb(read bool) string {
	if read {
		return "rlock"
	}
	return "lock"
}
