//go:build !syncwatch_off

package debughttp_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/debughttp"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

// TestMain runs in check mode, reporting deadlocks rather than panicking
// (the tests make them on purpose and end them), with the reports kept
// off standard error, and fails the run if a goroutine leaked.
func TestMain(m *testing.M) {
	lockorder.Configure(
		lockorder.WithMode(lockorder.ModeCheck),
		lockorder.WithDeadlockAction(lockorder.DeadlockReport),
		lockorder.WithHandler(func(lockorder.Violation) {}))
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// abba deadlocks two goroutines on two new locks, each holding one and
// waiting for the other, and returns the locks' names. The deadlock is
// ended when t ends: the test unlocks one lock on its holder's behalf
// (legal for a Mutex), which lets both goroutines finish.
func abba(t *testing.T, nameA, nameB string) {
	t.Helper()
	a, b := lockorder.NewMutex(nameA), lockorder.NewMutex(nameB)
	var (
		held    sync.WaitGroup
		done    sync.WaitGroup
		rescued atomic.Bool
	)
	held.Add(2)
	done.Go(func() {
		a.Lock()
		held.Done()
		held.Wait()
		b.Lock() // blocks: the other goroutine holds b
		b.Unlock()
		if !rescued.Load() { // a was unlocked for us
			a.Unlock()
		}
	})
	done.Go(func() {
		b.Lock()
		held.Done()
		held.Wait()
		a.Lock()
		a.Unlock()
		b.Unlock()
	})
	held.Wait()
	t.Cleanup(func() {
		rescued.Store(true)
		a.Unlock()
		done.Wait()
	})
	require.Eventually(t, func() bool { return len(debughttp.CheckHealth().Deadlocks) > 0 }, 20*time.Second, 10*time.Millisecond,
		"the cycle lasts the grace period")
}

// awaitProof waits until lockorder's monitor has proved the deadlock on
// the lock named name (every goroutine blocked across its grace period):
// the order edges the deadlocked goroutines held back for their own
// Unlocks (RULES.md R23) are in the lock-order graph from then on.
func awaitProof(t *testing.T, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, v := range lockorder.Violations() {
			if v.Kind == lockorder.KindCycle && strings.Contains(v.Message, name) {
				return true
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "the deadlock is proved, and its orders with it")
}

// stall makes loop name stall: its goroutine blocks, with a job pending,
// on a lock held by a goroutine that waits on a channel. It is ended when
// t ends.
func stall(t *testing.T, name string) *watchdog.Loop {
	t.Helper()
	ledger := lockorder.NewMutex(name + "_ledger")
	loop := watchdog.New(name, watchdog.WithBound(20*time.Millisecond))
	release := make(chan struct{})
	var done sync.WaitGroup
	holding := make(chan struct{})
	done.Go(func() {
		ledger.Lock()
		close(holding)
		<-release
		ledger.Unlock()
	})
	<-holding
	done.Go(func() {
		loop.Step()
		loop.Begin()
		ledger.Lock()
		ledger.Unlock()
		loop.End()
		loop.Step()
	})
	t.Cleanup(func() {
		close(release)
		done.Wait()
		loop.Close()
	})
	require.Eventually(t, func() bool { return loop.Check() != nil }, 20*time.Second, time.Millisecond)
	return loop
}
