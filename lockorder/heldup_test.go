//go:build !syncwatch_off

package lockorder_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/testchild"
	"github.com/syncwatch/syncwatch/lockorder"
)

// W2's exception for leaks that hold nothing up leaves no hung test to
// its -timeout where the runtime proves it hung: each scenario runs a
// real test (TestHeldUpInner, under tRunner) in a child process, which is
// expected to end with the deadlock's panic.

// heldUpEnv names the scenario TestHeldUpInner runs in a child process.
const heldUpEnv = "LOCKORDER_HELDUP"

// recurse calls f depth calls down: a test goroutine blocked deep in its
// code (a recursive descent, a deep framework stack) has more than the
// 100 frames the runtime prints, and its dump elides the middle ones.
func recurse(depth int, f func()) {
	if depth == 0 {
		f()
		return
	}
	recurse(depth-1, f)
}

// leakedSender leaves a goroutine blocked for good on a WaitGroup nobody
// will finish, which would have sent on the channel it returns: the
// helper of robfig/cron's and watermill's suites.
func leakedSender() chan bool {
	var wg lockorder.WaitGroup
	wg.Add(1) // the job that never runs
	ch := make(chan bool)
	go func() {
		wg.Wait()
		ch <- true
	}()
	return ch
}

func TestHeldUpInner(t *testing.T) {
	name := os.Getenv(heldUpEnv)
	if name == "" {
		t.Skip("a child process's test")
	}
	reported := make(chan struct{})
	var once sync.Once
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithDeadlockAction(lockorder.DeadlockPanic),
		lockorder.WithLongWait(50*time.Millisecond),
		lockorder.WithHandler(func(v lockorder.Violation) {
			os.Stdout.WriteString(v.String() + "\n")
			if v.Kind == lockorder.KindLeaked {
				once.Do(func() { close(reported) })
			}
		}))
	switch name {
	case "ignore-leaks":
		// A goroutine blocked for good in a syncwatch wait, outside any
		// cycle, holding nothing up: reported mid-run as leaked-goroutine.
		// Then the exit check runs as lockordertest runs it under
		// IgnoreLeaks (leaks false): the same goroutine must not be
		// reported a second time, under another kind.
		lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockReport))
		var mu lockorder.Mutex
		held := make(chan struct{})
		go func() {
			mu.Lock()
			close(held)
			<-make(chan struct{}) // its holder blocked for good
		}()
		<-held
		ids := make(chan int64, 1)
		go func() {
			ids <- goroutineID()
			mu.Lock() // blocked for good, behind the holder
		}()
		id := <-ids
		<-reported
		lockorder.ReportBlockedExcept(0, false, nil)
		var kinds []string
		for _, v := range lockorder.Violations() {
			if v.Goroutine == id {
				kinds = append(kinds, string(v.Kind))
			}
		}
		os.Stdout.WriteString(fmt.Sprintf("reports of goroutine %d: %q\n", id, kinds))
		if len(kinds) != 1 {
			os.Stdout.WriteString("REPORTED MORE THAN ONCE\n")
		}
		os.Exit(0)
	case "deep-test", "shallow-test":
		// The test goroutine blocks for good on the leaked helper's
		// channel. A progress logger keeps t reachable (it sleeps, so the
		// runtime counts it runnable): the parent, waiting on t's signal,
		// is not marked leaked; the test's goroutine is.
		go func() {
			for {
				time.Sleep(20 * time.Millisecond)
				_ = t.Name()
			}
		}()
		ch := leakedSender()
		depth := 0
		if name == "deep-test" {
			depth = 150
		}
		os.Stdout.WriteString("test blocks for good\n")
		recurse(depth, func() { <-ch })
	}
}

// runHeldUp runs scenario name in a child and returns its output and
// whether it ended within limit.
func runHeldUp(t *testing.T, name string, limit time.Duration) (string, bool) {
	t.Helper()
	if !proofAvailable() {
		t.Skip("needs the runtime's leak detection (Go 1.27)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeldUpInner$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), heldUpEnv+"="+name)
	out, exited, err := testchild.Until(cmd, "", limit)
	if err != nil && !errors.Is(err, testchild.ErrLimit) {
		t.Fatalf("%v:\n%s", err, out)
	}
	return out, exited
}

// A test blocked for good behind a goroutine the runtime proved blocked
// for good holds the program up: W2's exception must not leave it to the
// -timeout. Each scenario's test goroutine can never end.
func TestAHungTestBehindALeakIsActedOn(t *testing.T) {
	for _, name := range []string{"deep-test", "shallow-test"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, exited := runHeldUp(t, name, 45*time.Second)
			assert.Contains(t, out, "test blocks for good")
			assert.True(t, exited, "the test hangs for good, and is left to its -timeout:\n%s", out)
			assert.Contains(t, out, "panic:", out)
		})
	}
}

// goroutineID returns the calling goroutine's id.
func goroutineID() int64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseInt(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// A goroutine the monitor reported as leaked-goroutine mid-run is
// reported once: the exit check, run with leaks off (lockordertest's
// IgnoreLeaks), does not report it again as blocked-at-exit.
func TestALeakReportedMidRunIsNotReportedAgainAtExit(t *testing.T) {
	out, exited := runHeldUp(t, "ignore-leaks", 45*time.Second)
	assert.True(t, exited, out)
	assert.Contains(t, out, "reports of goroutine")
	assert.NotContains(t, out, "REPORTED MORE THAN ONCE", out)
}
