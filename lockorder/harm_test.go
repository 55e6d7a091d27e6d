//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Do no harm: a correct program is never failed, and a hung one is never
// quieter than with sync.

// hangShapes names the programs of testdata/hang, whose goroutines all
// deadlock, with what check mode must print before the runtime ends them
// ("" where only the runtime can tell: no cycle of waits, and the
// runtime's leak detection, where it exists, may prove it or not).
var hangShapes = map[string]string{
	"abba":                     "lockorder: deadlock: cycle of 2 goroutines",
	"double-lock":              "lockorder: recursive-lock: goroutine",
	"rlock-then-lock":          "lockorder: deadlock: cycle of 1 goroutine",
	"waitgroup":                "",
	"cond":                     "",
	"once-in-its-function":     "lockorder: deadlock: cycle of 1 goroutine",
	"lock-held-over-a-channel": "",
	"plain":                    "",
}

// TestWhollyDeadlockedProgramEndsAsWithSync runs each hang shape in trace
// and check mode, as a program of its own (a test binary imports packages
// whose initialisation leaves timers armed, which hide the runtime's
// detection with sync too), which must end as sync's would: the runtime's
// fatal error, exit status 2, after check mode's report.
func TestWhollyDeadlockedProgramEndsAsWithSync(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hang")
	build := exec.Command("go", "build", "-o", bin, "./testdata/hang")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	// With a long-wait bound of an hour, no report is due for an hour: the
	// program must end all the same.
	for _, mode := range []string{"trace", "check", "trace-longwait", "check-longwait"} {
		for shape, report := range hangShapes {
			args := []string{mode, shape}
			if m, ok := strings.CutSuffix(mode, "-longwait"); ok {
				args = []string{m, shape, "1h"}
				report = ""
			}
			t.Run(mode+"/"+shape, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
				require.NoError(t, ctx.Err(), "the program hung instead of ending as with sync:\n%s", out)
				var exit *exec.ExitError
				require.ErrorAs(t, err, &exit, "%s", out)
				assert.Equal(t, 2, exit.ExitCode(), "%s", out)
				fatal := strings.Index(string(out), "fatal error: all goroutines are asleep - deadlock!")
				require.GreaterOrEqual(t, fatal, 0, "%s", out)
				if mode == "check" && report != "" {
					i := strings.Index(string(out), report)
					require.GreaterOrEqual(t, i, 0, "check mode reports first:\n%s", out)
					assert.Less(t, i, fatal, "the report comes before the runtime's error")
				}
			})
		}
	}
}

// noVerdicts fails t if anything was reported that a correct program must
// never get: a deadlock, a recursive lock, a lock held by an exited
// goroutine, a long wait.
func noVerdicts(t *testing.T) {
	t.Helper()
	for _, k := range []lockorder.Kind{lockorder.KindDeadlock, lockorder.KindRecursiveLock, lockorder.KindHeldByExited, lockorder.KindLongWait} {
		assert.Empty(t, only(k), "a correct program got a %s report", k)
	}
}

// A lock taken by A is handed to a releaser that frees it after longer
// than the grace period, while A and C wait on each other's locks: the
// wait-for graph shows a cycle, but the releaser, sleeping, breaks it. The
// deadlock action stays DeadlockPanic: a guess would end the test binary.
func TestHandedOffLockBreaksACycleLater(t *testing.T) {
	for _, read := range []bool{false, true} {
		name := "write"
		if read {
			name = "read"
		}
		t.Run(name, func(t *testing.T) {
			fresh(t)
			shortGrace(t)
			l1, l2 := lockorder.NewRWMutex("handed-"+name), lockorder.NewMutex("other-"+name)
			if read {
				l1.RLock()
			} else {
				l1.Lock()
			}
			go func() { // the releaser, handed A's hold, busy past the grace period
				waitingOn(t, "handed-"+name, 1)
				waitingOn(t, "other-"+name, 1)
				busyUntilLookedInto(t)
				if read {
					l1.RUnlock()
				} else {
					l1.Unlock()
				}
			}()
			cHolds, cDone := make(chan struct{}), make(chan struct{})
			go func() { // C
				defer close(cDone)
				l2.Lock()
				close(cHolds)
				l1.Lock() // held by A, as far as A's records go
				l1.Unlock()
				l2.Unlock()
			}()
			<-cHolds
			l2.Lock() // A: held by C, which waits for l1
			l2.Unlock()
			<-cDone
			noVerdicts(t)
		})
	}
}

// A goroutine locks, hands the hold to a worker and exits; the worker
// releases it later while another goroutine waits: legal, no report.
func TestLockHandedOffByAnExitingGoroutine(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("handed-by-exit")
	handed := make(chan struct{})
	go func() {
		m.Lock()
		go func() { // the worker, busy until the monitor has looked at the holder
			waitingOn(t, "handed-by-exit", 1)
			busyUntilLookedInto(t)
			m.Unlock()
		}()
		close(handed)
	}()
	<-handed
	m.Lock() // waits for the worker
	m.Unlock()
	noVerdicts(t)
}

// Consumers idle in Cond.Wait while the producer is quiet for longer than
// the long-wait bound: idle is not stuck.
func TestIdleCondWaitersAreNotReported(t *testing.T) {
	for _, rlocker := range []bool{false, true} {
		name := "mutex"
		if rlocker {
			name = "rlocker"
		}
		t.Run(name, func(t *testing.T) {
			fresh(t)
			lockorder.Configure(lockorder.WithLongWait(200 * time.Millisecond))
			t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
			var mu lockorder.Mutex
			var rw lockorder.RWMutex
			var l sync.Locker = &mu
			if rlocker {
				l = rw.RLocker()
			}
			c := lockorder.NewCond(l)
			ready := false
			var wg sync.WaitGroup
			for range 32 {
				wg.Go(func() {
					l.Lock()
					for !ready {
						c.Wait()
					}
					l.Unlock()
				})
			}
			waitingInCond(t, 32)
			time.Sleep(time.Second) // time passing: the producer is quiet, past the bound
			if rlocker {
				rw.Lock() // the writer sets the condition
				ready = true
				rw.Unlock()
			} else {
				mu.Lock()
				ready = true
				mu.Unlock()
			}
			c.Broadcast()
			wg.Wait()
			noVerdicts(t)
		})
	}
}

// In a testing/synctest bubble, waits are measured in real time: a Cond
// wait across ten fake seconds, which takes no real time, is not long.
// (A sync lock wait is not durable: fake time stands still while one
// lasts, with sync as with lockorder.)
func TestSynctestFakeTimeMakesNoLongWait(t *testing.T) {
	fresh(t)
	synctest.Test(t, func(t *testing.T) {
		var mu lockorder.Mutex
		c := lockorder.NewCond(&mu)
		ready := false
		done := make(chan struct{})
		go func() {
			defer close(done)
			mu.Lock()
			for !ready {
				c.Wait()
			}
			mu.Unlock()
		}()
		time.Sleep(10 * time.Second) // fake
		mu.Lock()
		ready = true
		mu.Unlock()
		c.Signal()
		<-done
	})
	noVerdicts(t)
}

// A real deadlock inside a bubble is still reported: sync's lock waits are
// not durable, so the bubble never looks idle, and the monitor, which runs
// outside the bubble on real time, is what names it.
func TestSynctestDeadlockInABubbleIsReported(t *testing.T) {
	reportDeadlocks(t)
	found := make(chan lockorder.Violation, 4) // made outside the bubble
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindDeadlock {
			found <- v
		}
	}))
	synctest.Test(t, func(t *testing.T) {
		a, b := lockorder.NewMutex("bubble-a"), lockorder.NewMutex("bubble-b")
		aHeld, bHeld := make(chan struct{}), make(chan struct{})
		done := make(chan struct{}, 2)
		go func() {
			a.Lock()
			close(aHeld)
			<-bHeld
			b.Lock()
			b.Unlock()
			a.Unlock()
			done <- struct{}{}
		}()
		go func() {
			b.Lock()
			close(bHeld)
			<-aHeld
			a.Lock() // b is released on this goroutine's behalf
			a.Unlock()
			done <- struct{}{}
		}()
		var v lockorder.Violation
		select {
		case v = <-found:
		case <-time.After(time.Hour): // fake: the bubble is never idle while a Lock waits
		}
		assert.Contains(t, v.Message, "cycle of 2 goroutines")
		b.Unlock() // break it: the first goroutine gets b
		<-done
		<-done
	})
}

// A writer waits for a read hold left by a goroutine that returned without
// RUnlock: its long-wait report names the exited reader, which the
// wait-for graph alone cannot (read holds are anonymous to it).
func TestLongWaitNamesAnExitedReader(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithLongWait(300 * time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
	rw := lockorder.NewRWMutex("left-read")
	done := make(chan struct{})
	go func() {
		defer close(done)
		rw.RLock() // and returns without RUnlock
	}()
	<-done
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		rw.Lock()
		rw.Unlock()
	}()
	v := awaitKind(t, lockorder.KindLongWait, 10*time.Second)
	assert.Contains(t, v.Detail, "left-read#1 is held for reading by goroutine")
	assert.Contains(t, v.Detail, "which has exited without unlocking it")
	rw.RUnlock() // on the exited reader's behalf
	<-wrote
}

// A goroutine handed a lock unlocks it once a channel receive ends, as a
// timer's channel, a ticker, a deadline or time.AfterFunc would end it,
// while the lock's locker waits to lock it again: every goroutine is
// blocked, which rule W1 does not take as conclusive (only the runtime's
// leak detection sees timers). The recursive-lock report is made, worded
// as what it is, and no deadlock action is taken (DeadlockPanic stays in
// force: it would end the test binary). It fails while the wait lasts;
// once the wait ends, the record is expected, not failing.
func TestAHandOffAfterATimerIsNoDeadlockAction(t *testing.T) {
	fresh(t)
	shortGrace(t)
	reported := make(chan struct{})
	var once sync.Once
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindRecursiveLock {
			once.Do(func() { close(reported) })
		}
	}))
	mu := lockorder.NewMutex("leased")
	fire := make(chan struct{}) // the timer's channel
	done := make(chan struct{})
	go func() {
		defer close(done)
		mu.Lock()
		go func() {
			<-fire
			mu.Unlock()
		}()
		mu.Lock() // ends when the helper unlocks, as with sync
		mu.Unlock()
	}()
	<-reported
	vs := only(lockorder.KindRecursiveLock)
	require.Len(t, vs, 1)
	v := vs[0]
	assert.NotContains(t, v.Message, "for good")
	assert.Contains(t, v.Message, "as is every goroutine of the program")
	assert.Contains(t, v.Detail, "\nevidence: ")
	assert.Contains(t, v.Detail, "not conclusive")
	assert.False(t, v.Expected, "a wait that goes on fails")

	close(fire)
	<-done
	vs = only(lockorder.KindRecursiveLock)
	require.Len(t, vs, 1)
	assert.True(t, vs[0].Expected, "the wait ended: the record is expected, not failing")
	assert.Contains(t, vs[0].Detail, "not a deadlock")
}

// The same with time.AfterFunc, as a program would write it: the timer's
// function, which no goroutine runs until it fires, unlocks the lock. Its
// timer is an hour long, made to fire when the report comes. The test
// passes, as with sync, and the report is expected.
func TestAnAfterFuncUnlockIsNoDeadlockAction(t *testing.T) {
	fresh(t)
	shortGrace(t)
	mu := lockorder.NewMutex("lease")
	mu.Lock()
	timer := time.AfterFunc(time.Hour, mu.Unlock)
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) {
		if v.Kind == lockorder.KindRecursiveLock {
			timer.Reset(0) // as if the hour had passed
		}
	}))
	mu.Lock()
	mu.Unlock()
	vs := only(lockorder.KindRecursiveLock)
	require.Len(t, vs, 1)
	assert.True(t, vs[0].Expected)
}
