package bench

import (
	"sync"

	deadlock "github.com/sasha-s/go-deadlock"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A Detection is the outcome of one lock-usage scenario run under both
// detectors.
type Detection struct {
	// Scenario names the lock-usage pattern.
	Scenario string
	// Bug is set when the pattern can deadlock, so a detector should
	// report it; when unset the pattern is safe and a report is a false
	// positive.
	Bug bool
	// Lockorder and Deadlock say whether lockorder (in ModeCheck) and
	// go-deadlock reported anything while the scenario ran.
	Lockorder, Deadlock bool
}

// Correct reports whether a detector that reported (or not) got the
// scenario right: it reported a bug, or kept quiet about a safe pattern.
func (d Detection) Correct(reported bool) bool { return reported == d.Bug }

// Detect runs every scenario once with lockorder's locks in ModeCheck and
// once with go-deadlock's, and says which reported what. The scenarios run
// their goroutines one after another, so nothing ever blocks: both
// detectors work from the order in which locks were taken, not from a hang.
//
// Detect takes a few milliseconds. It changes process-wide state: it
// resets lockorder (lockorder.Reset) around each scenario, and on return
// restores the mode it found but leaves the default violation handler in
// place. It must not run concurrently with other users of lockorder. Built
// with the syncwatch_off tag, lockorder reports nothing.
func Detect() []Detection {
	var (
		mu  sync.Mutex
		got int
	)
	prev := lockorder.CurrentMode()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {
		mu.Lock()
		got++
		mu.Unlock()
	}))
	defer lockorder.Configure(lockorder.WithMode(prev), lockorder.WithHandler(nil))

	out := make([]Detection, 0, len(scenarios))
	for _, s := range scenarios {
		d := Detection{Scenario: s.name, Bug: s.bug}

		lockorder.Reset()
		mu.Lock()
		got = 0
		mu.Unlock()
		s.run(lockorderKit)
		mu.Lock()
		d.Lockorder = got > 0
		mu.Unlock()
		lockorder.Reset()

		before := DeadlockReports()
		s.run(deadlockKit)
		d.Deadlock = DeadlockReports() > before

		out = append(out, d)
	}
	return out
}

// mutex is what the scenarios need of a mutex.
type mutex interface {
	Lock()
	Unlock()
	TryLock() bool
}

// rwMutex is what the scenarios need of a reader/writer mutex.
type rwMutex interface {
	mutex
	RLock()
	RUnlock()
	RLocker() sync.Locker
}

// kit makes the locks of one detector. Locks made with the same class
// name belong to one lock class, for the detectors that have classes.
type kit struct {
	mutex   func(class string) mutex
	rwMutex func(class string) rwMutex
}

var lockorderKit = kit{
	mutex:   func(class string) mutex { return lockorder.NewMutex(class) },
	rwMutex: func(class string) rwMutex { return lockorder.NewRWMutex(class) },
}

var deadlockKit = kit{
	mutex:   func(string) mutex { return new(deadlock.Mutex) },
	rwMutex: func(string) rwMutex { return new(deadlock.RWMutex) },
}

// inTurn runs each step on a goroutine of its own, one after another, as
// separate parts of a program would.
func inTurn(steps ...func()) {
	for _, step := range steps {
		done := make(chan struct{})
		go func() {
			defer close(done)
			step()
		}()
		<-done
	}
}
