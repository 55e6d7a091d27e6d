package lockordertest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// recorder is a TestingT that records instead of failing.
type recorder struct{ errs []string }

func (r *recorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }

func inversion(x, y string) {
	a, b := lockorder.NewMutex(x), lockorder.NewMutex(y)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
	}()
	<-done
	b.Lock()
	a.Lock()
	a.Unlock()
	b.Unlock()
}

func setup(t *testing.T) {
	if lockorder.CurrentMode() == lockorder.ModeOff {
		t.Skip("built with syncwatch_off")
	}
	lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
	lockorder.Reset()
	_ = lockordertest.Find(lockordertest.IncludeExpected()) // consume anything left over
}

func TestVerifyNoneFailsOnInversion(t *testing.T) {
	setup(t)
	var r recorder
	lockordertest.VerifyNone(&r)
	if len(r.errs) != 0 {
		t.Fatalf("clean run failed: %v", r.errs)
	}
	inversion("vA", "vB")
	lockordertest.VerifyNone(&r)
	if len(r.errs) != 1 {
		t.Fatalf("VerifyNone reported %d errors, want 1", len(r.errs))
	}
	for _, want := range []string{"found 1 violation", "lock-order-cycle", "vB -> vA -> vB", "Possible deadlock scenario"} {
		if !strings.Contains(r.errs[0], want) {
			t.Errorf("report lacks %q:\n%s", want, r.errs[0])
		}
	}
	// Reported once: the next check is clean, unless asked for everything.
	var r2 recorder
	lockordertest.VerifyNone(&r2)
	if len(r2.errs) != 0 {
		t.Fatalf("the same violation failed a second check")
	}
	lockordertest.VerifyNone(&r2, lockordertest.IncludeReported())
	if len(r2.errs) != 1 {
		t.Fatal("IncludeReported did not include it")
	}
}

func TestIgnoreOptions(t *testing.T) {
	setup(t)
	inversion("iA", "iB")
	if err := lockordertest.Find(lockordertest.IgnoreKind(lockorder.KindCycle)); err != nil {
		t.Fatalf("IgnoreKind: %v", err)
	}
	if err := lockordertest.Find(lockordertest.IncludeReported(), lockordertest.IgnoreClass("iA")); err != nil {
		t.Fatalf("IgnoreClass: %v", err)
	}
	if err := lockordertest.Find(lockordertest.IncludeReported(), lockordertest.IgnoreClass("other")); err == nil {
		t.Fatal("IgnoreClass of an unrelated class hid the cycle")
	}
}

type account struct{ mu lockorder.Mutex }

// transfer locks two zero-value mutexes; they are named after its lines.
func transfer(from, to *account) {
	from.mu.Lock()
	to.mu.Lock()
	to.mu.Unlock()
	from.mu.Unlock()
}

func TestIgnoreClassOfZeroValueLocks(t *testing.T) {
	setup(t)
	a, b := &account{}, &account{}
	transfer(a, b)
	transfer(b, a)
	err := lockordertest.Find(lockordertest.IncludeReported())
	if err == nil {
		t.Fatal("no cycle found")
	}
	site := regexp.MustCompile(`lockordertest_test\.transfer \(lockordertest_test\.go:\d+\)`).FindString(err.Error())
	if site == "" {
		t.Fatalf("the report does not name transfer's lines:\n%v", err)
	}
	for _, ignore := range []string{site, "lockordertest_test.transfer"} {
		if err := lockordertest.Find(lockordertest.IncludeReported(), lockordertest.IgnoreClass(ignore)); err != nil {
			t.Errorf("IgnoreClass(%q): %v", ignore, err)
		}
	}
	for _, other := range []string{"lockordertest_test.transfer (lockordertest_test.go:1)", "lockordertest_test.trans", "transfer"} {
		if err := lockordertest.Find(lockordertest.IncludeReported(), lockordertest.IgnoreClass(other)); err == nil {
			t.Errorf("IgnoreClass(%q) hid the cycle", other)
		}
	}
}

func TestExpectedViolationsIgnoredByDefault(t *testing.T) {
	setup(t)
	lockorder.Report(lockorder.Violation{Kind: "stale-gradient-rejected", Source: "test", Message: "staleness 15 > 10", Expected: true})
	if err := lockordertest.Find(); err != nil {
		t.Fatalf("an expected violation failed the check: %v", err)
	}
	if err := lockordertest.Find(lockordertest.IncludeExpected(), lockordertest.IncludeReported()); err == nil {
		t.Fatal("IncludeExpected did not include it")
	}
}

// A LockContext that reached its deadline did what its caller asked: the
// caller has the error. It fails no test; IncludeExpected counts it.
func TestAWaitTimeoutTheCallerGotFailsNoTest(t *testing.T) {
	setup(t)
	mu := lockorder.NewMutex("bounded")
	mu.Lock()
	got := make(chan error)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		got <- mu.LockContext(ctx)
	}()
	err := <-got
	mu.Unlock()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LockContext = %v, want the deadline's error", err)
	}
	var r recorder
	lockordertest.VerifyNone(&r)
	if len(r.errs) != 0 {
		t.Fatalf("a wait-timeout the caller got failed the check: %v", r.errs)
	}
	err = lockordertest.Find(lockordertest.IncludeExpected(), lockordertest.IncludeReported())
	if err == nil || !strings.Contains(err.Error(), "wait-timeout") {
		t.Fatalf("IncludeExpected did not include the wait-timeout: %v", err)
	}
}

type fakeM struct{ code int }

func (m fakeM) Run() int { return m.code }

func TestVerifyTestMain(t *testing.T) {
	if os.Getenv("LOCKORDERTEST_CHILD") != "" {
		lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
		if os.Getenv("LOCKORDERTEST_CHILD") == "bad" {
			inversion("mA", "mB")
		}
		lockordertest.VerifyTestMain(fakeM{})
		return
	}
	if lockorder.CurrentMode() == lockorder.ModeOff {
		t.Skip("built with syncwatch_off")
	}
	for mode, wantFail := range map[string]bool{"good": false, "bad": true} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestVerifyTestMain$")
		cmd.Env = append(os.Environ(), "LOCKORDERTEST_CHILD="+mode)
		out, err := cmd.CombinedOutput()
		if wantFail != (err != nil) {
			t.Fatalf("%s: err=%v\n%s", mode, err, out)
		}
		if wantFail && !strings.Contains(string(out), "mB -> mA -> mB") {
			t.Fatalf("%s: output lacks the report:\n%s", mode, out)
		}
	}
}

func ExampleVerifyNone() {
	t := &recorder{} // in a real test: *testing.T
	lockorder.Reset()
	lockordertest.VerifyNone(t)
	fmt.Println(len(t.errs))
	// Output: 0
}

// Past the 10,000 violations lockorder keeps, more are still reported as
// they happen, and the check says how many it cannot list: it never
// passes over one.
func TestFindCountsViolationsNotKept(t *testing.T) {
	setup(t)
	t.Cleanup(lockorder.Reset) // 10,001 records: not for the next test
	const kept = 10_000
	for i := range kept + 3 {
		lockorder.Report(lockorder.Violation{Kind: "custom", Source: "test", Message: fmt.Sprintf("finding %d", i)})
	}
	if n := lockorder.NotKept()["custom"]; n < 3 {
		t.Fatalf("NotKept()[custom] = %d, want 3 or more (it counts since the program started)", n)
	}
	err := lockordertest.Find()
	if err == nil {
		t.Fatal("the check passed")
	}
	if !strings.Contains(err.Error(), "and 3 more reported while the tests ran, not kept") {
		t.Fatalf("the check does not say what it could not list:\n%.300s", err)
	}
	lockorder.Report(lockorder.Violation{Kind: "custom", Source: "test", Message: "one more"})
	err = lockordertest.Find()
	if err == nil || !strings.Contains(err.Error(), "and 1 more") {
		t.Fatalf("a violation not kept after the last check must fail the next one, alone: %v", err)
	}
	if err := lockordertest.Find(); err != nil {
		t.Fatalf("each counts once: %.300s", err)
	}
}
