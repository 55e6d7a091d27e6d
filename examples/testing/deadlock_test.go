package bank_test

import (
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	bank "github.com/syncwatch/syncwatch/examples/testing"
	"github.com/syncwatch/syncwatch/internal/testchild"
	"github.com/syncwatch/syncwatch/lockorder"
)

// deadlockEnv runs TestTransfersDeadlock for real: with it unset the test
// is skipped, so that go test ./... passes.
const deadlockEnv = "BANK_DEADLOCK"

// TestTransfersDeadlock is the bug biting: transfers in both directions at
// once until two of them deadlock. With sync.Mutex this test hangs until
// go test's -timeout (10 minutes) and ends in a dump of every goroutine.
// With lockorder.Mutex, where the runtime can prove the deadlock (Go 1.27;
// Go 1.26 built with GOEXPERIMENT=goroutineleakprofile), it fails within
// seconds, naming the cycle:
//
//	panic: lockorder: deadlock: cycle of 2 goroutines blocked for good:
//	goroutine 9 waits for lock account#1 held by goroutine 8;
//	goroutine 8 waits for lock account#2 held by goroutine 9 (the report is above)
//
// preceded by the report with both goroutines' stacks and which locks each
// holds, and the lock-order-cycle report of the two orders (had either
// transfer got through once, it would have come then, at its Unlock).
// Without the runtime's proof, the same report is printed within seconds,
// "blocked, as is every goroutine of the program", and the test ends at
// its -timeout, as with sync: a timer, which only the runtime sees, could
// still have ended the waits (docs/RULES.md W1).
//
// Run it with: BANK_DEADLOCK=1 go test -run TestTransfersDeadlock ./examples/testing
func TestTransfersDeadlock(t *testing.T) {
	if os.Getenv(deadlockEnv) == "" {
		t.Skip("a demonstration of a failing test: set " + deadlockEnv + "=1 to run it")
	}
	a, b := bank.NewAccount(1, 1_000_000), bank.NewAccount(2, 1_000_000)
	var wg lockorder.WaitGroup
	wg.Go(func() {
		for {
			_ = bank.Transfer(a, b, 1)
		}
	})
	wg.Go(func() {
		for {
			_ = bank.Transfer(b, a, 1)
		}
	})
	wg.Wait()
}

// The demonstration above, run as go test would: it fails, in seconds
// rather than at the timeout, with the deadlock named; without the
// runtime's proof, the deadlock is named in seconds all the same.
func TestDeadlockedTestFailsInSeconds(t *testing.T) {
	if lockorder.CurrentMode() != lockorder.ModeCheck {
		t.Skip("needs lockorder's check mode")
	}
	proof := pprof.Lookup("goroutineleak") != nil // the runtime's leak detection
	cmd := exec.Command(os.Args[0], "-test.run=^TestTransfersDeadlock$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), deadlockEnv+"=1")
	until := "" // the end of the child, which the deadlock action brings
	if !proof {
		until = "evidence: every goroutine"
	}
	out, exited, err := testchild.Until(cmd, until, 3*time.Minute)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	want := []string{"lockorder: deadlock: cycle of 2 goroutines", "waits for lock account#", "lock-order-cycle"}
	if proof {
		want = append(want, "panic: lockorder: deadlock: cycle of 2 goroutines blocked for good")
	}
	for _, want := range want {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if proof != exited {
		t.Errorf("the child ended: %v; want %v (ended only on the runtime's proof):\n%s", exited, proof, out)
	}
}
