//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden")

// goldenCase is one canonical scenario of a report kind: it makes the
// report and returns it.
type goldenCase struct {
	name string
	make func(t *testing.T) string
}

// goldenCases covers every kind lockorder reports (see the Kind
// constants), and each wording a kind has.
var goldenCases = []goldenCase{
	{"lock-order-cycle", goldenCycle},
	{"deadlock", goldenDeadlock},
	{"deadlock-once", goldenOnceSelfWait},
	{"deadlock-waitgroup", goldenWaitGroupSelfWait},
	{"recursive-lock", goldenRecursiveLock},
	{"recursive-lock-read", goldenRLockOverWrite},
	{"recursive-rlock", goldenRecursiveRLock},
	{"copied-lock", goldenCopiedLock},
	{"bad-unlock", goldenBadUnlock},
	{"wait-timeout", goldenWaitTimeout},
	{"not-held", goldenNotHeld},
	{"long-wait", goldenLongWait},
	{"held-by-exited-goroutine", goldenHeldByExited},
	{"held-by-exited-goroutine-at-exit", goldenHeldByExitedAtExit},
	{"blocked-at-exit", goldenBlockedAtExit},
}

// TestReportGolden makes one report of each kind and compares its
// normalised text, the message and the report the default handler
// prints, with testdata/golden/<name>.golden. Run with -update to accept
// a change of wording.
func TestReportGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			got := normaliseReport(c.make(t))
			golden := filepath.Join("testdata", "golden", c.name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

// goldenText is what a golden file holds of v: its message, then the
// report the default handler prints.
func goldenText(v lockorder.Violation) string {
	return "message: " + v.Message + "\n\n" + v.String()
}

// The parts of a report that vary from run to run, or from machine to
// machine.
var (
	goldenGoroutine = regexp.MustCompile(`goroutine (\d+)`)
	goldenPath      = regexp.MustCompile(`(^|[\s(])/[^\s():]*/([^/\s():]+\.(?:go|s))`)
	goldenLine      = regexp.MustCompile(`\.(go|s):\d+`)
	goldenInstance  = regexp.MustCompile(`#\d+`)
	goldenAddr      = regexp.MustCompile(`0x[0-9a-f]+`)
	goldenSpaces    = regexp.MustCompile(`(\S) {2,}`)
	goldenIndent    = regexp.MustCompile(`(?m)^ {9,}`)
	goldenDashes    = regexp.MustCompile(`-{3,}`)
	goldenDuration  = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|s))*\b`)
)

// normaliseReport replaces what varies between runs: goroutine ids (by
// G1, G2, ... in order of first mention, so that the report still says
// which goroutine is which), directories, line numbers, instance numbers,
// addresses and durations. The columns of a cycle's deadlock scenario
// are as wide as its goroutine ids: runs of spaces between words and of
// dashes, and indents deeper than a stack's, are shortened.
func normaliseReport(s string) string {
	ids := map[string]string{}
	s = goldenGoroutine.ReplaceAllStringFunc(s, func(m string) string {
		id := goldenGoroutine.FindStringSubmatch(m)[1]
		if _, ok := ids[id]; !ok {
			ids[id] = "G" + strconv.Itoa(len(ids)+1)
		}
		return "goroutine " + ids[id]
	})
	s = goldenPath.ReplaceAllString(s, "$1$2")
	s = goldenLine.ReplaceAllString(s, ".$1:L")
	s = goldenInstance.ReplaceAllString(s, "#N")
	s = goldenAddr.ReplaceAllString(s, "0xADDR")
	s = goldenSpaces.ReplaceAllString(s, "$1  ")
	s = goldenIndent.ReplaceAllString(s, strings.Repeat(" ", 12))
	s = goldenDashes.ReplaceAllString(s, "---")
	return goldenDuration.ReplaceAllString(s, "DUR")
}

// lockClasses lists the classes of the locks v names: which locks a
// report is about, whatever its wording (which the golden files pin).
func lockClasses(v lockorder.Violation) []string {
	var out []string
	for _, l := range v.Locks {
		out = append(out, l.Class)
	}
	return out
}

// onlyOne returns the one violation of kind k.
func onlyOne(t *testing.T, k lockorder.Kind) lockorder.Violation {
	t.Helper()
	vs := only(k)
	require.Len(t, vs, 1, "one %s report", k)
	return vs[0]
}

func goldenCycle(t *testing.T) string {
	fresh(t)
	a, b := lockorder.NewMutex("golden-a"), lockorder.NewMutex("golden-b")
	run(func() { lockAB(a, b) })
	run(func() { lockAB(b, a) })
	return goldenText(onlyOne(t, lockorder.KindCycle))
}

func goldenDeadlock(t *testing.T) string {
	reportDeadlocks(t)
	shortGrace(t)
	a, b := lockorder.NewMutex("golden-a"), lockorder.NewMutex("golden-b")
	aHeld, bHeld, firstWaits := make(chan struct{}), make(chan struct{}), make(chan struct{})
	done := make(chan struct{}, 2)
	go func() {
		a.Lock()
		close(aHeld)
		<-bHeld
		b.Lock()
		b.Unlock()
		done <- struct{}{}
	}()
	go func() {
		b.Lock()
		close(bHeld)
		<-aHeld
		<-firstWaits
		a.Lock()
		a.Unlock()
		b.Unlock()
		done <- struct{}{}
	}()
	// The report starts its cycle at the oldest wait: the wait for b.
	waitingOn(t, "golden-b", 1)
	close(firstWaits)
	v := awaitKind(t, lockorder.KindDeadlock, time.Minute)
	a.Unlock() // any goroutine may unlock a Mutex: this breaks the cycle
	<-done
	<-done
	return goldenText(v)
}

func goldenOnceSelfWait(t *testing.T) string {
	reportDeadlocks(t)
	lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic))
	var once lockorder.Once
	var got any
	func() {
		defer func() { got = recover() }()
		once.Do(func() { once.Do(func() {}) })
	}()
	require.NotNil(t, got, "the self-wait panics under DeadlockPanic")
	return fmt.Sprintf("panic: %v\n", got) + goldenText(onlyOne(t, lockorder.KindDeadlock))
}

func goldenWaitGroupSelfWait(t *testing.T) string {
	reportDeadlocks(t)
	lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic))
	var wg lockorder.WaitGroup
	var got any
	wg.Go(func() {
		defer func() { got = recover() }()
		wg.Wait() // waits for itself
	})
	wg.Wait()
	require.NotNil(t, got, "the self-wait panics under DeadlockPanic")
	return fmt.Sprintf("panic: %v\n", got) + goldenText(onlyOne(t, lockorder.KindDeadlock))
}

func goldenRecursiveLock(t *testing.T) string {
	reportDeadlocks(t)
	shortGrace(t)
	m := lockorder.NewMutex("golden-rec")
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Lock()
		m.Lock() // blocks for good, until the test unlocks the first hold
		m.Unlock()
	}()
	v := awaitKind(t, lockorder.KindRecursiveLock, time.Minute)
	m.Unlock()
	<-done
	return goldenText(v)
}

func goldenRLockOverWrite(t *testing.T) string {
	reportDeadlocks(t)
	shortGrace(t)
	m := lockorder.NewRWMutex("golden-wrec")
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Lock()
		m.RLock() // blocks for good, until the test unlocks the write hold
		m.RUnlock()
	}()
	v := awaitKind(t, lockorder.KindRecursiveLock, time.Minute)
	m.Unlock()
	<-done
	return goldenText(v)
}

func goldenRecursiveRLock(t *testing.T) string {
	fresh(t)
	m := lockorder.NewRWMutex("golden-rrec")
	run(func() {
		m.RLock()
		m.RLock()
		m.RUnlock()
		m.RUnlock()
	})
	return goldenText(onlyOne(t, lockorder.KindRecursiveRLock))
}

func goldenCopiedLock(t *testing.T) string {
	fresh(t)
	orig := lockorder.NewMutex("golden-copied")
	cp := copyOf(orig)
	run(func() { lockAB(orig, cp) })
	return goldenText(onlyOne(t, lockorder.KindCopiedLock))
}

// goldenBadUnlock shows the report the default handler prints before
// sync's fatal error ends the program.
func goldenBadUnlock(t *testing.T) string {
	out := runFatal(t, "double-unlock")
	report, _, found := strings.Cut(out, "fatal error:")
	require.True(t, found, "the program dies as sync's does:\n%s", out)
	return report
}

func goldenWaitTimeout(t *testing.T) string {
	fresh(t)
	m, inner := lockorder.NewMutex("golden-held"), lockorder.NewMutex("golden-inner")
	inner.Lock()
	done := make(chan struct{})
	go func() { // the holder of m, itself waiting for inner
		defer close(done)
		m.Lock()
		inner.Lock()
		inner.Unlock()
		m.Unlock()
	}()
	waitingOn(t, "golden-inner", 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	require.Error(t, m.LockContext(ctx))
	inner.Unlock()
	<-done
	return goldenText(onlyOne(t, lockorder.KindWaitTimeout))
}

func goldenNotHeld(t *testing.T) string {
	fresh(t)
	m := lockorder.NewRWMutex("golden-assert")
	m.AssertRHeld()
	return goldenText(onlyOne(t, lockorder.KindNotHeld))
}

func goldenLongWait(t *testing.T) string {
	reportDeadlocks(t)
	lockorder.Configure(lockorder.WithLongWait(time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
	m := lockorder.NewMutex("golden-long")
	ch := make(chan int)
	locked := make(chan struct{})
	go holdAndReceive(m, locked, ch)
	<-locked
	// The report says what the holder is doing: blocked on ch.
	waitUntil(t, func() bool { return parkedIn("holdAndReceive", "[chan receive") }, "the holder blocked on its channel")
	waited := lockInTurn(m)
	v := awaitKind(t, lockorder.KindLongWait, 20*time.Second)
	close(ch)
	<-waited
	return goldenText(v)
}

func goldenHeldByExited(t *testing.T) string {
	reportDeadlocks(t)
	m := lockorder.NewMutex("golden-left")
	leaveLocked(t, m)
	waited := lockInTurn(m)
	v := awaitKind(t, lockorder.KindHeldByExited, time.Minute)
	m.Unlock() // on the exited goroutine's behalf: legal
	<-waited
	return goldenText(v)
}

// parkedIn reports whether a goroutine whose stack contains fn is in a
// state whose header contains state ("[chan receive"; "": any state).
func parkedIn(fn, state string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, state) && strings.Contains(g, fn) {
			return true
		}
	}
	return false
}

// ours keeps the at-exit reports about the locks named golden-*: other
// tests' goroutines may still be about.
func ours(v lockorder.Violation) bool {
	for _, l := range v.Locks {
		if strings.HasPrefix(l.Name, "golden-") {
			return false
		}
	}
	return true
}

func goldenHeldByExitedAtExit(t *testing.T) string {
	fresh(t)
	m := lockorder.NewMutex("golden-left-at-exit")
	leaveLocked(t, m)
	waitUntil(t, func() bool { return !parkedIn("lockorder_test.leaveLocked.func1", "") }, "the goroutine's exit")
	lockorder.ReportBlockedExcept(0, false, ours)
	m.Unlock()
	return goldenText(onlyOne(t, lockorder.KindHeldByExited))
}

func goldenBlockedAtExit(t *testing.T) string {
	fresh(t)
	m := lockorder.NewMutex("golden-blocked")
	m.Lock()
	waited := lockInTurn(m)
	waitingOn(t, "golden-blocked", 1)
	lockorder.ReportBlockedExcept(0, false, ours)
	m.Unlock()
	<-waited
	return goldenText(onlyOne(t, lockorder.KindBlockedAtExit))
}
