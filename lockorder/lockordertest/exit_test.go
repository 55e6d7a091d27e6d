package lockordertest_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// funcM is a TestingM whose tests are a function.
type funcM func()

func (f funcM) Run() int { f(); return 0 }

var (
	globalMu    lockorder.Mutex // reachable for the life of the program
	globalLeft  lockorder.RWMutex
	globalLeft2 lockorder.RWMutex
	leftInTest  lockorder.Mutex
	lostMu      lockorder.Mutex
	idleMu      lockorder.Mutex
	idleCond    = lockorder.NewCond(&idleMu) // reachable: its waiter is idle, not leaked
)

// exitScenarios are test binaries' bodies: each starts goroutines that
// outlive it, as real tests' goroutines do, then returns.
var exitScenarios = map[string]func(){
	// A goroutine is still waiting for a lock, to take the locks in the
	// other order, when the tests return, behind a holder still at work:
	// VerifyTestMain waits for them, and the order is reported at the
	// straggler's Unlock of its outer lock (RULES.md R23).
	"straggler": func() {
		a, b := lockorder.NewMutex("sA"), lockorder.NewMutex("sB")
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
		held := make(chan struct{})
		go func() {
			a.Lock()
			close(held)
			for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
				// at work, running: the check waits for it
			}
			a.Unlock()
		}()
		<-held
		go straggle(a, b)
		waitBlockedIn("lockordertest_test.straggle")
	},
	// An Unlock lost on an early return, and a goroutine that then waits
	// for the lock.
	"lost-unlock": func() {
		lockorder.Configure(lockorder.WithHeldProfile(true)) // to say where the lock was taken
		done := make(chan struct{})
		go func() {
			defer close(done)
			globalMu.Lock()
			if len(os.Args) > 0 {
				return // forgot to unlock
			}
			globalMu.Unlock()
		}()
		<-done
		go func() {
			globalMu.Lock()
			globalMu.Unlock()
		}()
	},
	// The same without the held profile: where the lock was first taken
	// is said all the same.
	"lost-unlock-no-profile": func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			lostMu.Lock()
		}()
		<-done
		go func() {
			lostMu.Lock()
			lostMu.Unlock()
		}()
	},
	// A read lock left by a goroutine that exited, no one waiting.
	"left-rlock": func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			globalLeft.RLock()
		}()
		<-done
	},
	// The test function itself abandons a lock (see TestVerifyTestMainAtExit).
	"left-in-test": func() {},
	// A read lock left by a goroutine that exited, and a writer that
	// then waits for it; the lock is reachable only from the writer.
	"left-rlock-writer": func() {
		var mu lockorder.RWMutex
		done := make(chan struct{})
		go func() {
			defer close(done)
			mu.RLock()
		}()
		<-done
		go func() {
			mu.Lock()
			mu.Unlock()
		}()
	},
	"left-rlock-nested": func() {
		var outer lockorder.Mutex
		done := make(chan struct{})
		for range 2 {
			go func() {
				defer close(done)
				outer.Lock()
				globalLeft2.RLock()
				outer.Unlock()
			}()
			<-done
			done = make(chan struct{})
		}
		go func() {
			globalLeft2.RLock()
			globalLeft2.RUnlock()
			globalLeft2.Lock()
		}()
	},
	// The holder of a lock blocks on a channel no one sends on; a waiter
	// blocks on the lock.
	"lock-chan": func() {
		mu := lockorder.NewMutex("aggregation_lock")
		never := make(chan int)
		held := make(chan struct{})
		go func() {
			mu.Lock()
			close(held)
			<-never
			mu.Unlock()
		}()
		<-held
		go func() {
			mu.Lock()
			mu.Unlock()
		}()
	},
	// Correct code: a worker idle in Cond.Wait on a Cond that can still
	// be signalled, a lock left held by a goroutine whose lock became
	// garbage.
	"idle": func() {
		go func() {
			idleMu.Lock()
			idleCond.Wait()
			idleMu.Unlock()
		}()
		done := make(chan struct{})
		go func() {
			defer close(done)
			var m lockorder.Mutex
			m.Lock()
		}()
		<-done
	},
	// A holder slow to unlock: a long-wait while the tests run, but the
	// wait ended before they did. Shown, not failing.
	// A goroutine locks a lock it holds, which a timer is to unlock for
	// it (a hand-off): every goroutine is blocked, evidence only (RULES.md
	// W1). The report is printed in full at once, since a test it hangs
	// may end only at its -timeout; once the timer's goroutine unlocks,
	// the wait ends and the report is not failing. The timer's goroutine
	// waits for that report, not for any: a look that catches it awake
	// on a loaded machine puts the evidence off past the long-wait.
	"timer-handoff": func() {
		lockorder.Configure(lockorder.WithHandler(nil))
		mu := lockorder.NewMutex("timer-handed")
		mu.Lock()
		go func() {
			tick := time.NewTicker(50 * time.Millisecond) // a timer's channel: blocked between ticks
			defer tick.Stop()
			for range tick.C {
				if slices.ContainsFunc(lockorder.Violations(), func(v lockorder.Violation) bool {
					return v.Kind == lockorder.KindRecursiveLock
				}) {
					break
				}
			}
			mu.Unlock()
		}()
		mu.Lock()
		mu.Unlock()
	},
	"slow": func() {
		reported := make(chan struct{}, 1)
		lockorder.Configure(lockorder.WithLongWait(50*time.Millisecond), lockorder.WithHandler(func(v lockorder.Violation) {
			if v.Kind == lockorder.KindLongWait {
				select {
				case reported <- struct{}{}:
				default:
				}
			}
		}))
		mu := lockorder.NewMutex("slowly-released")
		mu.Lock()
		done := make(chan struct{})
		go func() {
			mu.Lock()
			mu.Unlock()
			close(done)
		}()
		<-reported
		mu.Unlock()
		<-done
	},
	// A holder asleep under its lock (a backoff) while a goroutine queues
	// for the lock as the tests end: slow, not stuck, and the check does
	// not wait for it.
	"sleepy-holder": func() {
		mu := lockorder.NewMutex("sleepy-holder")
		held := make(chan struct{})
		go func() {
			mu.Lock()
			close(held)
			time.Sleep(straggleFor)
			fmt.Println("LATE")
			mu.Unlock()
		}()
		<-held
		go waitFor(mu)
		waitBlockedIn("lockordertest_test.waitFor")
	},
	// A Close waiting in WaitGroup.Wait for a worker asleep when the tests
	// end: with sync, os.Exit cuts both off.
	"sleeper-behind-wait": func() {
		var wg lockorder.WaitGroup
		wg.Go(func() {
			time.Sleep(straggleFor)
			fmt.Println("LATE")
			panic("a straggler outlived the tests")
		})
		go wg.Wait()
		waitBlockedIn("lockorder.(*WaitGroup).Wait")
	},
	// A goroutine that sleeps past the end of the tests, then writes and
	// panics (as t.Log does after its test ended): with sync, os.Exit cuts
	// it off; VerifyTestMain, with no syncwatch wait to judge, must not
	// keep the program alive for it.
	"sleeper": func() {
		go func() {
			time.Sleep(straggleFor)
			fmt.Println("LATE")
			panic("a straggler outlived the tests")
		}()
	},
}

// straggleFor is how long the stragglers of the scenarios above sleep
// past the end of the tests: time passing, the behaviour under test. The
// check must not wait for them (os.Exit cuts them off, as with sync); one
// that did would wait past straggleFor (exitOptions gives it longer
// still), and they would print LATE. A correct check ends long before,
// however loaded the machine.
const straggleFor = 20 * time.Second

// exitOptions are the options a scenario's check is run with.
var exitOptions = map[string][]lockordertest.Option{
	"sleepy-holder":       {lockordertest.MaxWait(time.Minute)},
	"sleeper-behind-wait": {lockordertest.MaxWait(time.Minute)},
	"sleeper":             {lockordertest.MaxWait(time.Minute)},
}

// waitFor takes mu and lets it go.
func waitFor(mu *lockorder.Mutex) {
	mu.Lock()
	mu.Unlock()
}

// straggle takes b, then a, which another goroutine holds.
func straggle(a, b *lockorder.Mutex) {
	b.Lock()
	a.Lock()
	a.Unlock()
	b.Unlock()
}

// waitBlockedIn returns once a goroutine whose stack holds fn is blocked
// (neither running nor runnable).
func waitBlockedIn(fn string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		for g := range strings.SplitSeq(string(buf[:n]), "\n\n") {
			if strings.Contains(g, fn+"(") && !strings.Contains(g, "[running]") && !strings.Contains(g, "[runnable]") {
				return
			}
		}
		runtime.Gosched()
	}
}

func TestVerifyTestMainAtExit(t *testing.T) {
	if s := os.Getenv("LOCKORDERTEST_EXIT"); s != "" {
		lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))
		if s == "left-in-test" {
			// A test function abandons a lock on purpose.
			done := make(chan struct{})
			go func() {
				defer close(done)
				leftInTest.Lock()
			}()
			<-done
		}
		lockordertest.VerifyTestMain(funcM(exitScenarios[s]), exitOptions[s]...)
		return
	}
	if lockorder.CurrentMode() == lockorder.ModeOff {
		t.Skip("built with syncwatch_off")
	}
	// Where the runtime can tell, a goroutine blocked for good is reported
	// as leaked, with the same explanation.
	blocked, inChan := "blocked-at-exit", "which is blocked in chan receive at"
	if leak.Supported() {
		blocked, inChan = "leaked-goroutine", "which is blocked for good in chan receive at"
	}
	type outcome struct {
		fail bool
		out  []string
	}
	for scenario, want := range map[string]outcome{
		"straggler":           {true, []string{"lock-order-cycle", "sB -> sA -> sB"}},
		"sleeper":             {false, nil},
		"sleepy-holder":       {false, nil},
		"sleeper-behind-wait": {false, nil},
		"slow":                {false, []string{"lockordertest: not failing: ", "long-wait: goroutine", "slowly-released", "The wait has since ended, after "}},
		"timer-handoff":       {false, []string{"lockorder: recursive-lock: goroutine", "timer-handed", "as is every goroutine of the program", "evidence: every goroutine", "not failing", "not a deadlock"}},
		"lost-unlock":         {true, []string{"blocked-at-exit", "which has exited", "held-by-exited-goroutine: lockordertest_test.init.func2.1 (exit_test.go:", "the stack above is where it took the lock", "lockordertest_test.init.func2"}},
		// No goroutine waits for the lock left held: shown, not failing,
		// with the place and the test that took it, without a flag.
		"left-rlock":             {false, []string{"not failing", "held-by-exited-goroutine: lockordertest_test.init.func4.1 (exit_test.go:", "still held for reading by goroutine", "no goroutine waits for it", "the stack above is where the lock was first taken", "lockordertest_test.init.func4.1"}},
		"lost-unlock-no-profile": {true, []string{"held-by-exited-goroutine", "1 goroutine(s) wait for it", "the stack above is where the lock was first taken", "lockordertest_test.init.func3.1"}},
		"left-in-test":           {false, []string{"not failing", "in TestVerifyTestMainAtExit: lockorder: held-by-exited-goroutine"}},
		"left-rlock-nested":      {true, []string{"held-by-exited-goroutine", "still held for reading by goroutine"}},
		"left-rlock-writer":      {true, []string{"held-by-exited-goroutine", "still held for reading by goroutine"}},
		"lock-chan":              {true, []string{blocked, "waiting for lock aggregation_lock#1, held by goroutine", inChan + " github.com/syncwatch/syncwatch/lockorder/lockordertest_test"}},
		"idle":                   {},
	} {
		t.Run(scenario, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestVerifyTestMainAtExit$")
			// Under -race the runtime sleeps a second before exiting
			// (GORACE's atexit_sleep_ms), with sync too: not here, where
			// what keeps a program alive after its tests is the point.
			cmd.Env = append(os.Environ(), "LOCKORDERTEST_EXIT="+scenario, "GORACE=atexit_sleep_ms=0")
			out, err := cmd.CombinedOutput()
			if (err != nil) != want.fail {
				t.Fatalf("exit error %v, want failure %v:\n%s", err, want.fail, out)
			}
			if strings.Contains(string(out), "LATE") {
				t.Errorf("the check kept the program alive for a goroutine it had nothing to judge of:\n%s", out)
			}
			for _, w := range want.out {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if scenario == "timer-handoff" && slices.ContainsFunc(strings.Split(string(out), "\n"), func(line string) bool {
				return strings.HasPrefix(line, "lockorder: recursive-lock:") && strings.Contains(line, "the full report comes when the tests end")
			}) {
				t.Errorf("a report on evidence that is not proof was held back for the end of the tests:\n%s", out)
			}
			if n := strings.Count(string(out), "Possible deadlock scenario"); scenario == "straggler" && n != 1 {
				t.Errorf("the cycle's full report was printed %d times, want once:\n%s", n, out)
			}
		})
	}
}

// A holder waiting on a short timer under its lock is not stuck: the
// goroutine waiting for the lock is not reported, although the runtime
// shows both as blocked.
func TestVerifyNoneWaitsOutATimedHolder(t *testing.T) {
	setup(t)
	mu := lockorder.NewMutex("backoff")
	held := make(chan struct{})
	done := make(chan struct{}, 2)
	go func() {
		mu.Lock()
		close(held)
		<-time.After(300 * time.Millisecond) // a backoff under the lock
		mu.Unlock()
		done <- struct{}{}
	}()
	<-held
	go func() {
		mu.Lock()
		mu.Unlock()
		done <- struct{}{}
	}()
	var r recorder
	lockordertest.VerifyNone(&r)
	<-done
	<-done
	if len(r.errs) != 0 {
		t.Errorf("false report: %v", r.errs)
	}
}

// Goroutines that used locks and exited leave states behind; checking
// them is no data race (this test runs under -race in CI), and a lock they
// released is not reported.
func TestVerifyNoneAfterExitedGoroutines(t *testing.T) {
	setup(t)
	var mu lockorder.Mutex
	ids := make([]int64, 20)
	for i := range ids {
		done := make(chan struct{})
		go func() {
			defer close(done)
			ids[i] = goid.ID()
			mu.Lock()
			mu.Unlock()
		}()
		<-done
	}
	// Wait for them to exit, with no happens-before with their last
	// writes: a goroutine dump creates none.
	waitUntil(t, func() bool { return !anyAlive(ids) }, "the goroutines to exit")
	var r recorder
	lockordertest.VerifyNone(&r, lockordertest.MaxWait(0))
	if len(r.errs) != 0 {
		t.Errorf("false report: %v", r.errs)
	}
}

// anyAlive reports whether a goroutine dump shows any of ids.
func anyAlive(ids []int64) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, id := range ids {
		if strings.Contains(string(buf), fmt.Sprintf("goroutine %d [", id)) {
			return true
		}
	}
	return false
}

// waitUntil returns once cond holds, polling it, and fails t if it does
// not within 30 s: long enough that a loaded machine does not reach it,
// only a test that would hang.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-time.After(time.Millisecond)
	}
}
