package rwlock_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/leak"
)

// The differential test's steps, several goroutines at a time (see
// diff_test.go).

// An actor is a goroutine that runs the operations a step gives it.
type actor struct {
	cmd  chan func() bool
	res  chan bool
	busy bool // an operation given, its result not yet read
	// done is closed to cancel the actor's cancellable wait.
	done chan struct{}
}

func newActor() *actor {
	a := &actor{cmd: make(chan func() bool), res: make(chan bool, 1)}
	go func() {
		for f := range a.cmd {
			a.res <- f()
		}
	}()
	return a
}

// give starts o on a, on subject s.
func (a *actor) give(s subject, o op) {
	var f func() bool
	switch o {
	case opLock:
		f = func() bool { s.lock(); return true }
	case opRLock:
		f = func() bool { s.rlock(); return true }
	case opTryLock:
		f = s.tryLock
	case opTryRLock:
		f = s.tryRLock
	case opUnlock:
		f = func() bool { s.unlock(); return true }
	case opRUnlock:
		f = func() bool { s.runlock(); return true }
	case opLockCtx, opRLockCtx:
		a.done = make(chan struct{})
		done, wait := a.done, s.lockCtx
		if o == opRLockCtx {
			wait = s.rlockCtx
		}
		f = func() bool { return wait(done) }
	case opCancel:
		close(a.done)
		return // the wait already given ends
	}
	a.busy = true
	a.cmd <- f
}

// patience bounds a wait for the test's goroutines to park: far beyond
// any scheduling delay, reached only if one never does.
const patience = 10 * time.Second

// parked are the states of a goroutine blocked on a lock or a channel
// receive: it moves only when another goroutine of the test acts. Any
// other may move by itself: "semacquire", for one, is also where an
// allocation waits for the garbage collector.
var parked = map[string]bool{"chan receive": true, "select": true,
	"sync.Mutex.Lock": true, "sync.RWMutex.Lock": true, "sync.RWMutex.RLock": true}

// quiesce waits until every goroutine but the caller is parked.
func quiesce() error {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(patience); ; time.Sleep(20 * time.Microsecond) {
		n := runtime.Stack(buf, true)
		busy := ""
		for i, g := range strings.Split(string(buf[:n]), "\n\n") {
			if i == 0 {
				continue // the caller's own, listed first
			}
			_, state, _ := strings.Cut(g, "[")
			state, _, _ = strings.Cut(state, "]")
			state, _, _ = strings.Cut(state, ",") // ", 2 minutes"
			state, _ = leak.Marked(state)         // blocked for good: parked too
			if !parked[state] {
				busy = g
				break
			}
		}
		if busy == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("a goroutine never parks:\n%s", busy)
		}
	}
}

func TestDifferentialSteps(t *testing.T) {
	scenarios, steps := 40, 30
	if testing.Short() {
		scenarios = 8
	}
	for seed := range uint64(scenarios) {
		runSteps(t, seed, steps, false, syncSubject(), rwlockSubject())
	}
}

func TestDifferentialStepsGivingUp(t *testing.T) {
	scenarios, steps := 40, 30
	if testing.Short() {
		scenarios = 8
	}
	for seed := range uint64(scenarios) {
		runSteps(t, seed, steps, true, rwlockSubject())
	}
}

// runSteps drives the subjects through one random scenario of the given
// number of steps with four actors, then releases everything.
func runSteps(t *testing.T, seed uint64, steps int, cancellable bool, subjects ...subject) {
	t.Helper()
	const actors = 4
	r := rand.New(rand.NewPCG(seed, 3))
	m := newModel(actors)
	as := make([][]*actor, len(subjects))
	for i := range subjects {
		for range actors {
			as[i] = append(as[i], newActor())
		}
	}
	defer func() {
		for i := range as {
			for _, a := range as[i] {
				close(a.cmd)
			}
		}
	}()
	var trail []string
	fail := func(format string, args ...any) {
		t.Helper()
		buf := make([]byte, 1<<20)
		t.Logf("DUMP:\n%s", buf[:runtime.Stack(buf, true)])
		t.Fatalf("seed %d, after %s: %s", seed, strings.Join(trail, " "), fmt.Sprintf(format, args...))
	}
	step := func(a int, o op) {
		t.Helper()
		trail = append(trail, fmt.Sprintf("%d:%v", a, o))
		want := map[int]bool{} // the operations that complete, and their results
		for _, c := range m.apply(a, o) {
			want[c.actor] = c.ok
		}
		for i, s := range subjects {
			as[i][a].give(s, o)
		}
		if err := quiesce(); err != nil {
			fail("%v", err)
		}
		for i, s := range subjects {
			for k, ac := range as[i] {
				if !ac.busy {
					continue
				}
				ok, completes := want[k]
				select {
				case got := <-ac.res:
					ac.busy = false
					if !completes {
						fail("%s: actor %d's %v completed; the model says it blocks", s.name, k, m.last[k])
					}
					if got != ok {
						fail("%s: actor %d's %v returned %v, the model says %v", s.name, k, m.last[k], got, ok)
					}
				default:
					if completes {
						fail("%s: actor %d's %v blocks; the model says it completes", s.name, k, m.last[k])
					}
				}
			}
		}
		for _, s := range subjects {
			probe(s, "TryRLock", s.tryRLock, s.runlock, m.writer < 0, fail)
			probe(s, "TryLock", s.tryLock, s.unlock, m.writer < 0 && m.readers == 0, fail)
		}
	}
	for range steps {
		if a, o, ok := m.choose(r, cancellable); ok {
			step(a, o)
		}
	}
	// Release everything: cancel what can be, unlock what is held.
	for {
		a, o, ok := m.release()
		if !ok {
			break
		}
		step(a, o)
	}
	if m.writer >= 0 || m.readers != 0 || len(m.wq) != 0 || len(m.rq) != 0 {
		fail("the model did not end free: %+v", m)
	}
}

// probe checks that try agrees with want; a try that locks is undone.
func probe(s subject, name string, try func() bool, undo func(), want bool, fail func(string, ...any)) {
	got := try()
	if got {
		undo()
	}
	if got != want {
		fail("%s: %s = %v, the model says %v", s.name, name, got, want)
	}
}
