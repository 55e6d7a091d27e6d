//go:build !syncwatch_off

package lockorder_test

import (
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

const childEnv = "LOCKORDER_TEST_CHILD"

// runChild runs one fatal scenario in a subprocess: sync's unlock errors
// are fatal (not panics), and a data race fails the process, so they can
// only be observed from outside.
func runChild() {
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(nil))
	switch os.Getenv(childEnv) {
	case "unlock":
		var m lockorder.Mutex
		m.Unlock()
	case "double-unlock":
		m := lockorder.NewMutex("twice")
		m.Lock()
		m.Unlock()
		m.Unlock()
	case "runlock":
		var m lockorder.RWMutex
		m.RUnlock()
	case "unlock-read-locked":
		var m lockorder.RWMutex
		m.RLock()
		m.Unlock()
	case "runlock-trace":
		lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
		var m lockorder.RWMutex
		m.RUnlock()
	case "deadlock-abba":
		// The default action under go test: the program fails, naming
		// the cycle, instead of hanging, once the runtime proves it.
		flag.Parse() // -test.timeout, as go test passes it
		lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic))
		a, b := lockorder.NewMutex("child-a"), lockorder.NewMutex("child-b")
		aHeld, bHeld := make(chan struct{}), make(chan struct{})
		go func() {
			a.Lock()
			close(aHeld)
			<-bHeld
			b.Lock()
		}()
		b.Lock()
		close(bHeld)
		<-aHeld
		a.Lock()
	case "wg-go-panic":
		// As with sync: the panic ends the program before Done, so Wait
		// cannot return and the program exit normally first.
		var wg lockorder.WaitGroup
		wg.Go(func() { panic("boom") })
		wg.Wait()
		os.Stdout.WriteString("Wait returned\n")
		os.Exit(0)
	case "leak-goes-on":
		runLeakGoesOn()
	case "race-off":
		raceScenario(lockorder.ModeOff)
	case "race-trace":
		raceScenario(lockorder.ModeTrace)
	case "race-check":
		raceScenario(lockorder.ModeCheck)
	default:
		if name, ok := strings.CutPrefix(os.Getenv(childEnv), "proof-"); ok {
			runProof(name)
		}
	}
	os.Exit(0)
}

func runFatal(t *testing.T, scenario string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+scenario)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the child must die like sync does:\n%s", out)
	return string(out)
}

func TestBadUnlockReportedBeforeSyncFails(t *testing.T) {
	for scenario, want := range map[string][]string{
		"unlock":             {"bad-unlock: Unlock of unlocked lockorder_test.runChild (unlock_test.go:", "fatal error: sync: unlock of unlocked mutex"},
		"double-unlock":      {"bad-unlock: Unlock of unlocked twice#", "fatal error: sync: unlock of unlocked mutex"},
		"runlock":            {"bad-unlock: RUnlock of unlocked lockorder_test.runChild (unlock_test.go:", "fatal error: lockorder: RUnlock of unlocked RWMutex"},
		"unlock-read-locked": {"bad-unlock: Unlock of read-locked (not write-locked) lockorder_test.runChild (unlock_test.go:", "fatal error: lockorder: Unlock of unlocked RWMutex"},
	} {
		t.Run(scenario, func(t *testing.T) {
			out := runFatal(t, scenario)
			for _, w := range want {
				assert.Contains(t, out, w)
			}
			// The report comes first and carries the caller's stack.
			assert.Less(t, indexOf(out, "bad-unlock"), indexOf(out, want[1]))
			assert.Contains(t, out, "lockorder_test.runChild")
		})
	}
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return len(s)
}

func TestUnlockByAnotherGoroutineIsLegal(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("xA"), lockorder.NewMutex("xB")
	locked := make(chan struct{})
	go func() {
		a.Lock()
		close(locked)
	}()
	<-locked
	a.Unlock() // hand-off: unlocked by the test goroutine
	assert.Empty(t, lockorder.Violations())

	// The goroutine that locked a no longer counts as holding it: taking
	// b then a elsewhere, and a then b here, is one edge each, no stale
	// edge from the handed-off lock.
	run(func() {
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
	})
	assert.Empty(t, lockorder.Violations())
}

func TestHandOffLockerNoLongerHolds(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("hA"), lockorder.NewMutex("hB")
	step, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Lock()
		step <- struct{}{} // the test goroutine unlocks a for us
		<-release
		a.AssertHeld() // a was released by someone else
		b.Lock()       // must not record a->b
		b.Unlock()
		a.Lock() // not a recursive lock: a is free
		a.Unlock()
	}()
	<-step
	a.Unlock()
	close(release)
	<-done
	vs := lockorder.Violations()
	require.Len(t, vs, 1, "%v", vs)
	assert.Equal(t, lockorder.KindNotHeld, vs[0].Kind)
	_, edges := lockorder.GraphSize()
	assert.Zero(t, edges, "no edge from a lock released by another goroutine")
}

func TestRUnlockByAnotherGoroutineIsLegal(t *testing.T) {
	fresh(t)
	m := lockorder.NewRWMutex("xr")
	run(func() { m.RLock() })
	m.RUnlock()
	run(func() {
		m.RLock() // not recursive: the earlier read hold ended
		m.RUnlock()
	})
	assert.Empty(t, lockorder.Violations())
}

func TestRelockAfterHandOffIsNotRecursive(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("relock")
	other := lockorder.NewMutex("relock-other")
	step, back := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		other.Lock()
		m.Lock()
		step <- struct{}{} // the test goroutine unlocks m for us
		<-back
		m.Lock() // free again: not recursive
		m.Unlock()
		m.Lock() // and again, after our own unlock
		m.Unlock()
		other.Unlock()
	}()
	<-step
	m.Unlock()
	close(back)
	<-done
	assert.Empty(t, lockorder.Violations())
}

// Outside ModeCheck nothing is reported, but the misuse still ends the
// program, as sync's does, from the goroutine that made it.
func TestBadRUnlockIsFatalInTraceMode(t *testing.T) {
	out := runFatal(t, "runlock-trace")
	assert.Contains(t, out, "fatal error: lockorder: RUnlock of unlocked RWMutex")
	assert.NotContains(t, out, "bad-unlock")
	assert.Contains(t, out, "lockorder_test.runChild")
}
