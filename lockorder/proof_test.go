//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Deadlocks that no cycle of waits shows, or whose cycle runs through a
// wait that looks bounded, still fail go test within seconds, naming the
// primitives, where the runtime's leak detection proves them (docs/
// RULES.md, W1 and W2); without it, a cycle is reported on W1's evidence,
// and not acted on.

// proofShapes each leave goroutines blocked for good on primitives that
// nothing running can reach (they are made in the shape's function, which
// returns), then the child blocks for good too. leak says the shape needs
// the runtime's leak detection; unproven that even it cannot prove the
// deadlock (a table of syncwatch's reaches a primitive of it), so that it
// is reported on W1's evidence only; want is what the report names.
var proofShapes = map[string]struct {
	run      func()
	leak     bool
	unproven bool
	want     []string
}{
	// A goroutine waits on a Cond while holding a lock that the only
	// goroutine that would signal it needs.
	"cond-holding-the-signallers-lock": {func() {
		var mu lockorder.Mutex
		other := lockorder.NewMutex("signaller-needs")
		c := lockorder.NewCond(&mu)
		waiting := make(chan struct{})
		go func() {
			other.Lock()
			mu.Lock()
			close(waiting)
			c.Wait() // nobody will signal
		}()
		<-waiting
		go func() {
			other.Lock() // held by the waiter
			c.Signal()
		}()
	}, true, false, []string{"blocked for good", "signaller-needs"}},
	// The same with a Cond on RWMutex.RLocker() and a queued writer.
	"rlocker-cond-and-a-queued-writer": {func() {
		rw := lockorder.NewRWMutex("cond-rw")
		other := lockorder.NewMutex("writer-needs")
		c := lockorder.NewCond(rw.RLocker())
		waiting := make(chan struct{})
		go func() {
			other.Lock()
			rw.RLock()
			close(waiting)
			c.Wait()
		}()
		<-waiting
		go func() {
			rw.Lock() // the writer queues, then needs other
			other.Lock()
			c.Broadcast()
		}()
	}, true, false, []string{"blocked for good", "writer-needs"}},
	// A worker counted with Add and Done needs a lock its waiter holds.
	"waitgroup-add-done": {func() {
		l := lockorder.NewMutex("waiter-holds")
		var wg lockorder.WaitGroup
		held := make(chan struct{})
		go func() {
			l.Lock()
			wg.Add(1)
			close(held)
			wg.Wait()
		}()
		<-held
		go func() {
			l.Lock()
			wg.Done()
		}()
	}, true, false, []string{"blocked for good", "waiter-holds"}},
	// LockContext with a context that can be cancelled but never is: no
	// deadline bounds the wait, so the cycle through it is a deadlock.
	"lockcontext-cancellable-never-cancelled": {func() {
		a, b := lockorder.NewMutex("ctx-a"), lockorder.NewMutex("ctx-b")
		ctx, cancel := context.WithCancel(context.Background())
		_ = cancel // kept, never called
		aHeld, bHeld := make(chan struct{}), make(chan struct{})
		go func() {
			a.Lock()
			close(aHeld)
			<-bHeld
			_ = b.LockContext(ctx)
		}()
		go func() {
			b.Lock()
			close(bHeld)
			<-aHeld
			a.Lock()
		}()
	}, false, true, []string{"cycle of 2 goroutines", "ctx-a", "ctx-b"}},
}

// runProof runs proof shape name in this child process under go test's
// defaults (DeadlockPanic, a test timeout), and blocks the main goroutine
// for good, which the deadlock holds up: on a channel nothing else can
// reach (not in select {}, which is how a server's main parks on
// purpose). It does not return.
func runProof(name string) {
	flag.Parse() // -test.timeout, as go test passes it
	lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic), lockorder.WithHandler(nil))
	proofShapes[name].run()
	<-make(chan struct{})
}

// runLeakGoesOn leaves a goroutine blocked for good on a WaitGroup that
// nobody will finish, as a test does that waits for a job with a timeout
// and finds it did not run, then goes on: the goroutine holds up neither
// main nor a test. Under DeadlockPanic, the program is not ended: it
// prints the leak's report and goes on, as it would with sync.
func runLeakGoesOn() {
	flag.Parse()
	reported := make(chan struct{})
	var once sync.Once
	lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic), lockorder.WithLongWait(time.Millisecond),
		lockorder.WithHandler(func(v lockorder.Violation) {
			os.Stdout.WriteString(v.String() + "\n")
			if v.Kind == lockorder.KindLeaked {
				once.Do(func() { close(reported) })
			}
		}))
	wait := func(wg *lockorder.WaitGroup) chan bool {
		ch := make(chan bool)
		go func() {
			wg.Wait()
			ch <- true
		}()
		return ch
	}
	var wg lockorder.WaitGroup
	wg.Add(1) // the job that must not run
	select {
	case <-wait(&wg):
		os.Stdout.WriteString("the job ran\n")
	case <-time.After(time.Millisecond):
	}
	<-reported
	os.Stdout.WriteString("went on\n")
	os.Exit(0)
}

// A goroutine blocked for good that holds up neither main nor a test is a
// leak: reported as leaked-goroutine, as the exit check would, and not
// acted on (RULES.md W2). A test that waits for a job with a timeout,
// and leaves the waiter behind, is not ended for it.
func TestABlockedWaitThatHoldsNothingUpIsALeakNotActedOn(t *testing.T) {
	if !proofAvailable() {
		t.Skip("needs the runtime's leak detection (Go 1.27)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), childEnv+"=leak-goes-on")
	out, exited := childUntil(t, cmd, "")
	assert.True(t, exited, out)
	assert.Contains(t, out, "leaked-goroutine: goroutine")
	assert.Contains(t, out, "in a wait for WaitGroup")
	assert.Contains(t, out, "went on")
	assert.NotContains(t, out, "panic:")
	assert.NotContains(t, out, "the job ran")
}

func TestDeadlocksOutsideCyclesFailFast(t *testing.T) {
	leaks := pprof.Lookup("goroutineleak") != nil
	for name, s := range proofShapes {
		t.Run(name, func(t *testing.T) {
			if s.leak && !leaks {
				t.Skip("needs the runtime's leak detection (Go 1.27)")
			}
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.timeout=10m")
			cmd.Env = append(os.Environ(), childEnv+"=proof-"+name)
			// Without the runtime's proof, every goroutine blocked is
			// evidence, not proof (W1): reported in full, not acted on.
			proven := leaks && !s.unproven
			until := "" // the end of the child, which the deadlock action brings
			if !proven {
				until = "evidence: every goroutine"
			}
			out, exited := childUntil(t, cmd, until)
			for _, w := range s.want {
				assert.True(t, strings.Contains(out, w), "the report names %q:\n%s", w, out)
			}
			if proven {
				assert.True(t, exited, "the deadlock action ends the program:\n%s", out)
				assert.Contains(t, out, "panic: lockorder: deadlock")
				return
			}
			assert.False(t, exited, "ended on evidence that is not proof:\n%s", out)
			assert.NotContains(t, out, "panic: lockorder: deadlock")
		})
	}
}
