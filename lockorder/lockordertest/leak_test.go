package lockordertest_test

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// leakSetup skips where the runtime cannot tell leaked goroutines, and
// reports whether the test is to run here. A leak test leaves goroutines
// that can never end, which every later Reset would bring back to later
// tests: so each runs in a child process of its own, and leakSetup, in
// the parent, runs it there and fails t if it fails.
func leakSetup(t *testing.T) bool {
	setup(t)
	if !leak.Supported() {
		t.Skipf("%s cannot tell leaked goroutines (Go 1.27 can)", runtime.Version())
	}
	if os.Getenv("LOCKORDERTEST_LEAKS") != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "LOCKORDERTEST_LEAKS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return false
}

// blocked starts f in a goroutine, which sends its id on ids before it
// blocks, and returns that id once the runtime shows the goroutine
// blocked (lockorder's primitives block on channels).
func blocked(f func(ids chan<- int64)) int64 {
	ids := make(chan int64, 1)
	go f(ids)
	id := <-ids
	for {
		switch waitfor.Fresh().States()[id] {
		case "running", "runnable", "":
			runtime.Gosched()
			continue
		}
		return id
	}
}

func sendID(ids chan<- int64) { ids <- goid.ID() }

// leakOnChannel blocks a goroutine for good on a channel nothing else
// reaches.
func leakOnChannel() int64 { return blocked(parkForever) }

//go:noinline
func parkForever(ids chan<- int64) {
	never := make(chan int)
	sendID(ids)
	<-never
}

func TestVerifyNoneReportsLeakedGoroutines(t *testing.T) {
	if !leakSetup(t) {
		return
	}
	for name, c := range map[string]struct {
		leak func() int64
		want []string
	}{
		"channel": {leakOnChannel, []string{"is blocked for good in chan receive at", "lockordertest_test.parkForever"}},
		"cond": {func() int64 {
			return blocked(func(ids chan<- int64) {
				var mu lockorder.Mutex
				c := lockorder.NewCond(&mu)
				mu.Lock()
				sendID(ids)
				c.Wait()
			})
		}, []string{"in a wait for Cond", "lockordertest_test.TestVerifyNoneReportsLeakedGoroutines.func1.1"}},
		"waitgroup": {func() int64 {
			var wg lockorder.WaitGroup
			wg.Add(1)
			return blocked(func(ids chan<- int64) {
				sendID(ids)
				wg.Wait()
			})
		}, []string{"in a wait for WaitGroup"}},
		"mutex": {func() int64 {
			mu := lockorder.NewMutex("leaky")
			holder := blocked(func(ids chan<- int64) {
				never := make(chan int)
				mu.Lock()
				sendID(ids)
				<-never
			})
			_ = holder
			return blocked(func(ids chan<- int64) { // lockorder's Lock waits on a channel
				sendID(ids)
				mu.Lock()
			})
		}, []string{"in a wait for lock leaky#1", "held by goroutine", "which is blocked for good in chan receive at"}},
	} {
		t.Run(name, func(t *testing.T) {
			id := c.leak()
			var r recorder
			lockordertest.VerifyNone(&r)
			if len(r.errs) != 1 {
				t.Fatalf("VerifyNone reported %d errors, want 1: %v", len(r.errs), r.errs)
			}
			want := append([]string{"leaked-goroutine: goroutine " + itoa(id) + " is blocked for good", "it was started by github.com/syncwatch/syncwatch/lockorder/lockordertest_test."}, c.want...)
			for _, w := range want {
				if !strings.Contains(r.errs[0], w) {
					t.Errorf("report lacks %q:\n%s", w, r.errs[0])
				}
			}
			var again recorder
			lockordertest.VerifyNone(&again)
			if len(again.errs) != 0 {
				t.Errorf("a leak reported twice: %v", again.errs)
			}
		})
	}
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func TestVerifyNoneIgnoresLeaksAsTold(t *testing.T) {
	if !leakSetup(t) {
		return
	}
	for name, opt := range map[string]func() lockordertest.Option{
		"IgnoreTopFunction, as reported": func() lockordertest.Option {
			return lockordertest.IgnoreTopFunction("github.com/syncwatch/syncwatch/lockorder/lockordertest_test.parkForever")
		},
		"IgnoreLeaks": lockordertest.IgnoreLeaks,
	} {
		t.Run(name, func(t *testing.T) {
			o := opt()
			id := leakOnChannel()
			var r recorder
			lockordertest.VerifyNone(&r, o)
			// (Earlier tests' leaks in lockorder waits may show as
			// blocked-at-exit with the check off.)
			if s := strings.Join(r.errs, "\n"); strings.Contains(s, "leaked-goroutine") || strings.Contains(s, "goroutine "+itoa(id)+" ") {
				t.Errorf("an ignored leak reported: %v", r.errs)
			}
			lockordertest.VerifyNone(&recorder{}) // take it, for the tests after
		})
	}
	t.Run("IgnoreCurrent", func(t *testing.T) {
		leakOnChannel()
		o := lockordertest.IgnoreCurrent()
		var r recorder
		lockordertest.VerifyNone(&r, o)
		if len(r.errs) != 0 {
			t.Errorf("a leak from before IgnoreCurrent reported: %v", r.errs)
		}
		id := leakOnChannel()
		lockordertest.VerifyNone(&r, o)
		if len(r.errs) != 1 || !strings.Contains(r.errs[0], "goroutine "+itoa(id)+" is blocked for good") {
			t.Errorf("a leak after IgnoreCurrent: got %v, want goroutine %d reported", r.errs, id)
		}
		lockordertest.VerifyNone(&recorder{})
	})
}

// Goroutines that block and are then woken, or finish, are no leak.
func TestVerifyNoneNoLeakForFinishedGoroutines(t *testing.T) {
	if !leakSetup(t) {
		return
	}
	release := make(chan struct{})
	done := make(chan struct{})
	var wg lockorder.WaitGroup
	wg.Add(1)
	blocked(func(ids chan<- int64) {
		defer close(done)
		sendID(ids)
		<-release
		wg.Done()
	})
	close(release)
	wg.Wait()
	<-done
	var r recorder
	lockordertest.VerifyNone(&r)
	if len(r.errs) != 0 {
		t.Errorf("false report: %v", r.errs)
	}
}

// Where the runtime cannot tell, one line on standard error says so,
// however many checks run.
func TestCannotTellSaidOnce(t *testing.T) {
	if os.Getenv("LOCKORDERTEST_CANNOT_TELL") != "" {
		for range 3 {
			lockordertest.VerifyNone(&recorder{}, lockordertest.MaxWait(0))
		}
		return
	}
	if lockorder.CurrentMode() == lockorder.ModeOff {
		t.Skip("built with syncwatch_off")
	}
	if leak.Supported() {
		t.Skipf("%s can tell leaked goroutines", runtime.Version())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCannotTellSaidOnce$")
	cmd.Env = append(os.Environ(), "LOCKORDERTEST_CANNOT_TELL=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if n := strings.Count(string(out), "cannot tell leaked goroutines"); n != 1 {
		t.Errorf("said %d times, want once:\n%s", n, out)
	}
}
