// Package lockordertest turns lockorder's reports into test failures, the
// way go.uber.org/goleak does for leaked goroutines.
//
//	func TestTransfer(t *testing.T) {
//		defer lockordertest.VerifyNone(t)
//		...
//	}
//
// or, for a whole package:
//
//	func TestMain(m *testing.M) {
//		lockordertest.VerifyTestMain(m)
//	}
//
// Under go test lockorder runs in ModeCheck by default, so every lock-order
// cycle, recursive lock, bad unlock, failed AssertHeld and abandoned
// bounded wait seen while the tests ran is a failure, and so is every long
// wait still under way when they check. (A long wait that ended was slow,
// not stuck: VerifyTestMain shows it without failing.) (A deadlock
// fails the test binary at once, with the cycle: see
// lockorder.WithDeadlockAction.)
//
// Most concurrency bugs bite in goroutines that outlive the test function,
// so VerifyNone and VerifyTestMain first wait, at most two seconds (see
// [MaxWait]), until no goroutine is running or runnable and every
// syncwatch wait that could be reported has lasted a second. (A goroutine
// asleep in time.Sleep or blocked elsewhere is not waited for: with sync,
// os.Exit would cut it off, and the check keeps no program alive longer
// than that needs.) Then they also fail on what is stuck: every goroutine
// blocked for a second or more in a syncwatch wait that only another
// goroutine could end, when one of the goroutines it needs cannot act
// (following the chain of waits: one has exited or is blocked; a holder
// asleep under its lock is slow, not stuck) (blocked-at-exit, with why); and every lock still held by a goroutine
// that has exited that another goroutine waits for
// (held-by-exited-goroutine; one that no goroutine waits for is recorded
// as expected, and VerifyTestMain shows it without failing).
//
// # Leaked goroutines
//
// Where the runtime can tell (Go 1.27, or 1.26 built with
// GOEXPERIMENT=goroutineleakprofile), they also fail on every goroutine
// blocked for good, on anything: a channel, a select, a Cond, a WaitGroup,
// a lock that nothing runnable can reach (leaked-goroutine). Each report
// says what syncwatch knows of the wait (the primitive, who holds it, the
// chain of waits), the goroutine's stack and where it was started. A
// leaked goroutine fails the first check that finds it only. Elsewhere
// one line on standard error says, once, that leaks go unreported.
// [IgnoreTopFunction] and [IgnoreCurrent] ignore known leaks, as goleak's
// options of those names do; [IgnoreLeaks] turns the check off. The check
// is one garbage collection cycle per VerifyNone or VerifyTestMain, in
// place of the one they ran before: its cost grows with the live heap and
// the number of goroutines, about one and a half times a runtime.GC, some
// tens of milliseconds for a heap of 100 MB and 10,000 goroutines
// (bench/'s BenchmarkLeakCheck measures it).
//
// Violations a program
// is built to handle (marked Expected, such as a rejected stale gradient)
// are ignored unless [IncludeExpected] is given.
package lockordertest

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

// TestingT is the part of *testing.T that VerifyNone uses.
type TestingT interface {
	Error(args ...any)
}

// TestingM is the part of *testing.M that VerifyTestMain uses.
type TestingM interface {
	Run() int
}

// An Option changes which violations count.
type Option interface {
	apply(*options)
}

type options struct {
	kinds    []lockorder.Kind
	classes  []string
	expected bool
	all      bool
	maxWait  time.Duration
	topFuncs []string // IgnoreTopFunction
	current  []int64  // IgnoreCurrent: goroutine ids
	noLeaks  bool     // IgnoreLeaks
}

// defaultMaxWait is how long VerifyNone and VerifyTestMain wait for
// goroutines still running, by default.
const defaultMaxWait = 2 * time.Second

func newOptions(opts []Option) options {
	o := options{maxWait: defaultMaxWait}
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	return o
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// IgnoreKind ignores violations of the given kinds.
func IgnoreKind(kinds ...lockorder.Kind) Option {
	return optionFunc(func(o *options) { o.kinds = append(o.kinds, kinds...) })
}

// IgnoreClass ignores violations that involve a lock of one of the given
// classes: the class names given to NewMutex or SetClass, or, for a
// zero-value lock, the place that first locked it, named as in reports,
// "store.(*DB).beginTx (db.go:801)", or only its function,
// "store.(*DB).beginTx", for every place in it and in its closures, and
// in every instance of a generic function (see lockorder.LockRef).
// A zero-value lock whose place is unknown is named "Mutex@0xc000012345".
func IgnoreClass(classes ...string) Option {
	return optionFunc(func(o *options) { o.classes = append(o.classes, classes...) })
}

// IncludeExpected counts violations marked Expected too.
func IncludeExpected() Option {
	return optionFunc(func(o *options) { o.expected = true })
}

// MaxWait sets how long VerifyNone and VerifyTestMain wait for goroutines
// that are still running to finish, block or sleep, and for syncwatch
// waits to last a second, before they check (default 2s). Zero checks at
// once; a goroutine is still reported as blocked only once its wait has
// lasted a second. A negative duration panics.
func MaxWait(d time.Duration) Option {
	if d < 0 {
		panic("lockordertest: negative MaxWait")
	}
	return optionFunc(func(o *options) { o.maxWait = d })
}

// IncludeReported counts violations that an earlier VerifyNone or Find
// already returned. By default each violation fails one check only, so
// that one bad test does not fail every test after it.
func IncludeReported() Option {
	return optionFunc(func(o *options) { o.all = true })
}

var (
	mu sync.Mutex
	// shown maps the ID of each violation an earlier check saw to the
	// LatestID it had then: the violation counts again only once a later
	// occurrence is grouped under it. It is kept per violation, not as one
	// high-water mark: a violation whose latest occurrence came after
	// another violation was first recorded must not hide that one. It
	// holds only the violations Violations still returns.
	shown = map[uint64]uint64{}
	// notKept is lockorder.NotKept when a check last looked: those past
	// it count once, as shown does for the violations kept.
	notKept map[lockorder.Kind]int
)

// Find returns an error describing every violation that counts, or nil.
// The error lists the full reports.
func Find(opts ...Option) error {
	o := newOptions(opts)
	return o.find()
}

func (o *options) find() error {
	mu.Lock()
	defer mu.Unlock()
	var found []lockorder.Violation
	now := make(map[uint64]uint64)
	for _, v := range lockorder.Violations() {
		if (o.all || v.LatestID > shown[v.ID]) && o.counts(v) {
			found = append(found, v)
		}
		if !v.Expected || o.expected {
			// An expected record is not marked shown: a long-wait shown
			// as ended whose Key then gets a wait still under way is
			// failing again, and counts.
			now[v.ID] = v.LatestID
		}
	}
	shown = now
	lost := 0
	nowLost := lockorder.NotKept()
	for k, n := range nowLost {
		if !slices.Contains(o.kinds, k) && (k != lockorder.KindLeaked || !o.noLeaks) {
			lost += n - notKept[k]
		}
	}
	notKept = nowLost
	if len(found) == 0 && lost == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lockordertest: found %d violation(s):\n", len(found))
	if lost > 0 {
		// Reported while the tests ran (their one-line reports are
		// above), and failing, but past what lockorder keeps. (Only
		// IgnoreKind applies to them: what else they hold is not kept.)
		fmt.Fprintf(&b, "(and %d more reported while the tests ran, not kept: lockorder keeps 10,000)\n", lost)
	}
	for _, v := range found {
		b.WriteString("\n")
		if name := v.Test; name != "" {
			fmt.Fprintf(&b, "in %s: ", name)
		}
		b.WriteString(v.String())
	}
	return errors.New(b.String())
}

func (o *options) counts(v lockorder.Violation) bool {
	if v.Expected && !o.expected {
		return false
	}
	if slices.Contains(o.kinds, v.Kind) || o.ignoredLeak(v) || o.noLeaks && v.Kind == lockorder.KindLeaked {
		return false
	}
	for _, l := range v.Locks {
		if slices.Contains(o.classes, l.Class) || slices.ContainsFunc(o.classes, func(c string) bool { return inFunc(l.Func, c) }) {
			return false
		}
	}
	return true
}

// VerifyNone fails t if a violation that counts was recorded and not yet
// returned by an earlier check. Call it at the end of a test, typically
// with defer.
func VerifyNone(t TestingT, opts ...Option) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	if err := verify(opts); err != nil {
		t.Error(err)
	}
}

// verify waits for stragglers, reports what is stuck, and finds what
// counts.
func verify(opts []Option) error {
	o := newOptions(opts)
	settle(o.maxWait)
	if !o.noLeaks {
		noteCannotTell()
	}
	lockorder.ReportBlockedExcept(blockedFloor, !o.noLeaks, o.ignoredLeak)
	return o.find()
}

// VerifyTestMain runs the tests and then fails the run (exit code 1) if a
// violation that counts was recorded. It calls os.Exit.
//
// While the tests run, lockorder's default handler prints one line per
// violation, when it happens; VerifyTestMain prints each in full at the
// end, naming the test it happened in when its stacks show one, so that
// each report is printed once.
func VerifyTestMain(m TestingM, opts ...Option) {
	os.Exit(RunAndVerify(m, opts...))
}

// notFailing lists, in full, what is shown without failing: the locks
// left held by exited goroutines that no goroutine waited for (a lock a
// test abandons by mistake is worth a look), the long waits that ended
// (slow, not stuck), and the deadlocks reported on evidence that is not
// proof whose waits ended (a timer's hand-off, say: RULES.md W1).
func notFailing() string {
	var b strings.Builder
	for _, v := range lockorder.Violations() {
		switch v.Kind {
		case lockorder.KindHeldByExited, lockorder.KindLongWait, lockorder.KindDeadlock, lockorder.KindRecursiveLock:
		default:
			continue
		}
		if v.Expected {
			b.WriteString("\nlockordertest: not failing: ")
			if name := v.Test; name != "" {
				fmt.Fprintf(&b, "in %s: ", name)
			}
			b.WriteString(v.String())
		}
	}
	return b.String()
}

// inFunc reports whether fn, the function of a lock's site ("" if none),
// is f, one of its closures ("f.func1", "f.func2.1"; from Go 1.27 "f.1")
// or an instance of it if generic ("f[...]").
func inFunc(fn, f string) bool {
	if fn == "" || !strings.HasPrefix(fn, f) {
		return false
	}
	rest := strings.TrimPrefix(fn[len(f):], "[...]")
	if rest == "" {
		return true
	}
	rest, ok := strings.CutPrefix(rest, ".")
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "func")
	return rest != "" && '0' <= rest[0] && rest[0] <= '9'
}
