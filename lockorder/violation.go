package lockorder

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// Kind names a kind of violation. Values are stable, kebab-case strings,
// suitable as telemetry attribute values.
type Kind string

// The kinds lockorder reports. Other syncwatch packages add their own
// (barrier-broken, stale-gradient-rejected, ...).
const (
	// KindCycle: locks were taken in orders that form a cycle, so that
	// goroutines following them at the same time can deadlock.
	KindCycle Kind = "lock-order-cycle"
	// KindRecursiveLock: a goroutine locked a lock it already holds (or
	// read-locked one it holds for writing, or the reverse). It deadlocks.
	KindRecursiveLock Kind = "recursive-lock"
	// KindRecursiveRLock: a goroutine read-locked an RWMutex it already
	// holds for reading. Go forbids it: it deadlocks once a writer queues.
	KindRecursiveRLock Kind = "recursive-rlock"
	// KindCopiedLock: a goroutine locked a mutex that shares its identity
	// with one it holds, because one of the two is a copy of the other,
	// made after NewMutex or NewRWMutex returned it or after its first
	// use. Without the check it would be reported as a recursive-lock. The
	// mutex being locked gets an identity of its own, and checking goes on.
	KindCopiedLock Kind = "copied-lock"
	// KindBadUnlock: Unlock or RUnlock of a lock that is not locked.
	KindBadUnlock Kind = "bad-unlock"
	// KindWaitTimeout: a bounded lock wait gave up (LockContext). It is
	// Expected: the caller has the error.
	KindWaitTimeout Kind = "wait-timeout"
	// KindNotHeld: AssertHeld or AssertRHeld found the lock not held by the
	// calling goroutine.
	KindNotHeld Kind = "not-held"
	// KindDeadlock: goroutines are blocked in syncwatch waits in a cycle,
	// each waiting for the next (a goroutine waiting for itself is a cycle
	// of one), and nothing that can end by itself is in the cycle. Since a
	// goroutine outside the cycle may legally unlock a Mutex, a cycle that
	// such a goroutine could still break is reported once it has lasted a
	// grace period (two seconds).
	KindDeadlock Kind = "deadlock"
	// KindLongWait: a wait in a syncwatch primitive lasted longer than
	// the long-wait bound (see [WithLongWait]) without progress; the
	// report names the holder and what the holder is doing now.
	KindLongWait Kind = "long-wait"
	// KindHeldByExited: a goroutine waits for a lock whose holder has
	// exited without unlocking it; or, at exit, a lock is still held by a
	// goroutine that has exited (Expected when no goroutine waits for it).
	KindHeldByExited Kind = "held-by-exited-goroutine"
	// KindBlockedAtExit: when the tests ended (lockordertest), a goroutine
	// was still blocked in a syncwatch wait; the report says on what and
	// why.
	KindBlockedAtExit Kind = "blocked-at-exit"
	// KindLeaked: the runtime found a goroutine blocked for good, on a
	// channel, select or sync primitive that no runnable goroutine can
	// reach (Go 1.27, or 1.26 built with
	// GOEXPERIMENT=goroutineleakprofile); the report says what syncwatch
	// knows of the wait and where the goroutine was started. See
	// [ReportBlocked].
	KindLeaked Kind = "leaked-goroutine"
)

// TopFunctionAttribute is the attribute of a leaked-goroutine violation
// that names the goroutine's innermost function as the runtime prints it,
// machinery included ("sync.runtime_notifyListWait", "main.worker"): what
// go.uber.org/goleak calls its top function.
const TopFunctionAttribute = "syncwatch.goroutine.top_function"

// Frame is one call site of a stack.
type Frame struct {
	Function string
	File     string
	Line     int
}

// String formats f as "function (file:line)".
func (f Frame) String() string { return fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line) }

// Stack is a call stack, innermost frame first, without lockorder's frames.
type Stack []Frame

// String formats s the way Go prints goroutine stacks.
func (s Stack) String() string {
	var b strings.Builder
	for _, f := range s {
		fmt.Fprintf(&b, "    %s\n        %s:%d\n", f.Function, f.File, f.Line)
	}
	return b.String()
}

// LockRef names a lock in a report.
type LockRef struct {
	// Name is the lock's name: "store#2" for the second lock of class
	// "store"; for a zero-value lock, the place that first locked it and
	// an instance number, "store.(*DB).beginTx (db.go:801)#2" for the
	// second lock first locked there, or "Mutex@0xc000012345" when that
	// place is unknown.
	Name string
	// Class is the class name; for a zero-value lock, the place that first
	// locked it, "store.(*DB).beginTx (db.go:801)" (or, when that is
	// unknown, Name).
	Class string
	// Func is the function of that place for a zero-value lock,
	// "store.(*DB).beginTx"; "" for a named class, or when the place is
	// unknown.
	Func string
	// ID is unique to the lock instance for the life of the process.
	ID uint64
}

// Edge is one edge of a lock-order cycle: To was acquired while From was held.
type Edge struct {
	// From and To name the graph nodes: class names, or lock names when
	// the two locks share a class.
	From, To string
	// FromRead and ToRead are set when From was held, or To acquired,
	// for reading.
	FromRead, ToRead bool
	// Goroutine is a goroutine that took To this way (for reading or for
	// writing, as ToRead says) while holding From, at Stack, at Time: the
	// first, or the latest that made the edge able to block where it could
	// not before (it held fewer locks around it), the one a deadlock along
	// the cycle looks like.
	Goroutine int64
	Stack     Stack
	Time      time.Time
}

// Violation is one report. Violations are values: they can be kept,
// compared by Kind and printed after the fact.
type Violation struct {
	// ID numbers violations in the order they were recorded, from 1. It
	// is never reused, even across Reset.
	ID uint64
	// LatestID is the number given, from ID's sequence, to the latest
	// occurrence grouped under this one (see Instances): ID until there
	// is another. Something new since number n has LatestID > n: that is
	// how lockordertest fails a test whose own objects repeat a cycle an
	// earlier test showed.
	LatestID uint64
	Kind     Kind
	// Source is the package that reported it: "lockorder", "barrier", ...
	Source string
	// Message is a one-line summary.
	Message string
	Time    time.Time
	// Goroutine is the goroutine that caused or observed the violation,
	// and Stack where.
	Goroutine int64
	Stack     Stack
	// Locks lists the locks involved.
	Locks []LockRef
	// Cycle lists the edges of a lock-order cycle, in order: Cycle[i].To
	// is Cycle[i+1].From, and the last To is the first From.
	Cycle []Edge
	// Holder is the goroutine holding the lock waited on (wait-timeout),
	// and HolderStack where it is now; 0 and nil when unknown.
	Holder      int64
	HolderStack Stack
	// Waited is how long the wait lasted, for wait violations.
	Waited time.Duration
	// Detail is further human-readable text, e.g. why a barrier rank is
	// missing.
	Detail string
	// Expected marks a runtime condition the program is built to handle,
	// such as a rejected stale gradient, rather than a bug; in the records
	// [Violations] returns, also a long-wait whose wait has since ended.
	// lockordertest.VerifyNone ignores expected violations unless asked.
	Expected bool
	// Err is the typed error with the facts, when the reporter has one
	// (*barrier.BrokenError, *staleness.StaleError, ...).
	Err error
	// Attrs are extra structured facts for telemetry.
	Attrs []attribute.KeyValue
	// Key identifies the violation for deduplication: a violation whose
	// Key was reported before is dropped. Reporters may set it to group
	// occurrences (say, one per lock and call site); only the first
	// occurrence of a Key is recorded, so its Message, Detail and Err
	// describe that one; later ones are dropped, adding their Instances to
	// the recorded one's (paramserver, say, counts its rejections in its
	// own Stats). By default Key is made of the source, kind, message and
	// innermost stack frame. The Key of lockorder's reports about locks
	// is made of what the locks are in the code (class names) and the
	// stack that used them, not of which function first locked a
	// zero-value lock, so that the same recursive lock or wait-timeout
	// at one place in the code is one report. A cycle's Key is made of its named classes and the
	// lines that took its locks, not of which function first locked a
	// zero-value lock, nor of the test or caller that reached it: the
	// same cycle between the fields of many objects is one report.
	Key string
	// Instances counts the distinct occurrences grouped under Key: the
	// locks (for a cycle, the sets of locks) it was seen on; the first is
	// the one Locks and Cycle name. [Violations] returns the count so
	// far; the handler and the span see the first occurrence, with 1. It
	// is 0 for reports that do not count their occurrences.
	Instances int
	// Test is the test, benchmark, example or fuzz function ("TestPut")
	// whose code is in the stacks of the occurrence shown (the goroutine
	// that found it, then the edges of a cycle); if none is, the one whose
	// goroutine started one of those goroutines, directly or through
	// goroutines still running when it was found (a server's goroutine a
	// test started); or "".
	Test string
	// Tests counts the distinct tests (test, benchmark, example and fuzz
	// functions, by name, up to 64) whose code is in the stacks of the
	// occurrences counted in Instances: one cycle reached from two tests
	// is one report, with Tests 2. It is 0 when no test is in them.
	Tests int

	// tests are the names Tests counts.
	tests []string
	// instance identifies this occurrence among those grouped under Key
	// (for a cycle, its graph nodes): an occurrence seen before is dropped
	// uncounted. Empty when occurrences are not counted.
	instance string
	// printNow asks the default handler to print the report in full at
	// once, even under the harness: an inconclusive deadlock (RULES.md W1)
	// whose test may end only at go test's -timeout.
	printNow bool
}

// TestNames returns the names of the tests Tests counts, in the order
// they were seen.
func (v Violation) TestNames() []string { return slices.Clone(v.tests) }

func (v Violation) source() string {
	if v.Source == "" {
		return "lockorder"
	}
	return v.Source
}
