package lockorder

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// config is the process-wide configuration. It is replaced, never mutated,
// so readers load it without locking.
type config struct {
	handler        func(Violation)
	providers      // WithTracerProvider's and WithMeterProvider's
	waitThreshold  time.Duration
	deadlockAction DeadlockAction
	longWait       time.Duration
	longWaitSet    bool
	flight         flightConfig // see WithFlightRecorder
	// grace, if positive, replaces the monitor's grace period
	// (deadlockGrace). Only tests set it (export_test.go), so that none
	// has to sleep past two seconds to show what the grace period allows.
	grace time.Duration
}

var (
	cfg      atomic.Pointer[config]
	configMu sync.Mutex // serializes Configure
	modeWord atomic.Uint32
	// defaultCfg is the configuration init stores, not a copy: an
	// allocated config would link its type, and Violation's with it, into
	// every program. Configure replaces it and never writes to it.
	defaultCfg = config{waitThreshold: 10 * time.Millisecond}
	// initRule is set while the process has been in check mode since
	// lockorder's init, so that every acquisition was seen: only then is
	// a lock's first write taken for its initialisation (see use). init
	// sets it if it chose check mode; updateMode clears it for good when
	// the mode changes. It is read only at a lock's first acquisition.
	initRule atomic.Bool
)

// modeWord packs the mode (bits 0-1) and whether the held-locks profiles
// are on (bit 2) with a counter (bits 3 and up) bumped on every change of
// either, so that per-goroutine state recorded under older rules is
// dropped. Lock loads it once and has everything it needs.
const (
	modeMask   = 3 // the Mode
	profileBit = 4 // the held-locks profiles are on
	flagBits   = modeMask | profileBit
	epochShift = 3
)

func loadMode() Mode { return Mode(modeWord.Load() & modeMask) }

func setMode(m Mode) { updateMode(func(w uint32) uint32 { return w&^modeMask | uint32(m) }) }

func setHeldProfile(on bool) { setModeAndProfile(loadMode(), on) }

// setModeAndProfile sets the mode and the held-profile switch together.
func setModeAndProfile(m Mode, profile bool) {
	updateMode(func(w uint32) uint32 {
		w = w&^(modeMask|profileBit) | uint32(m)
		if profile {
			w |= profileBit
		}
		return w
	})
}

// updateMode applies f to the mode bits of modeWord, bumping the counter
// if they change.
func updateMode(f func(uint32) uint32) {
	for {
		old := modeWord.Load()
		bits := f(old & flagBits)
		if bits == old&flagBits {
			return
		}
		if modeWord.CompareAndSwap(old, (old>>epochShift+1)<<epochShift|bits) {
			syncFastPaths()
			if (old^bits)&modeMask != 0 {
				// Acquisitions in another mode go unseen: from here on
				// no first write is taken for an initialisation.
				initRule.Store(false)
			}
			if Mode(old&modeMask) == ModeCheck && Mode(bits&modeMask) != ModeCheck {
				forgetWriters()
			}
			return
		}
	}
}

// init is the package's only init function, so that nothing depends on
// the order in which its files are compiled: it installs the hooks of the
// internal packages, then the configuration, the mode and the held-profile
// switch the environment asks for, then what follows from them.
func init() {
	restoreGoExperiment()
	installHooks()
	if underTest() {
		defaultCfg.deadlockAction = DeadlockPanic
	}
	cfg.Store(&defaultCfg)
	setModeAndProfile(defaultMode(os.Getenv("SYNCWATCH_MODE"), underTest()), os.Getenv("SYNCWATCH_HELD_PROFILE") == "1")
	// Every acquisition is seen from here, if the mode is check.
	initRule.Store(loadMode() == ModeCheck)
	syncFastPaths() // even if the mode stayed ModeOff, which changes nothing above
	applyMonitor(&defaultCfg, modeWord.Load())
}

// defaultMode picks the mode from the environment: SYNCWATCH_MODE if it is
// set and valid, else check under go test and trace elsewhere.
func defaultMode(env string, underTest bool) Mode {
	if env != "" {
		m, err := ParseMode(env)
		if err == nil {
			return m
		}
		fmt.Fprintf(os.Stderr, "%v; ignoring it\n", err) // err says "lockorder: SYNCWATCH_MODE=..."
	}
	if underTest {
		return ModeCheck
	}
	return ModeTrace
}

// Configure applies opts on top of the current process-wide configuration.
// It is safe to call at any time, from any goroutine; locks taken before a
// mode change are still released correctly after it.
func Configure(opts ...Option) {
	configMu.Lock()
	defer configMu.Unlock()
	w := modeWord.Load()
	s := settings{config: *cfg.Load(), mode: Mode(w & modeMask), heldProfile: w&profileBit != 0}
	for _, o := range opts {
		if o != nil {
			o.apply(&s)
		}
	}
	// What the options ask for is done here, once they are all applied.
	cfg.Store(&s.config)
	setModeAndProfile(s.mode, s.heldProfile)
	applyMonitor(&s.config, modeWord.Load())
	applyFlightRecorder(&s.config)
}

// settings is what the options write: the process-wide configuration, and
// the mode and held-profile switch, which live in modeWord.
type settings struct {
	config
	mode        Mode
	heldProfile bool
}

// An Option changes the configuration; see [Configure]. It only records
// what it asks for: Configure carries it out, once all options are applied.
type Option interface {
	apply(*settings)
}

type optionFunc func(*settings)

func (f optionFunc) apply(s *settings) { f(s) }

// WithMode sets the mode. An unknown Mode panics.
func WithMode(m Mode) Option {
	if m != ModeOff && m != ModeTrace && m != ModeCheck {
		panic(fmt.Sprintf("lockorder: unknown Mode %d", int(m)))
	}
	return optionFunc(func(s *settings) { s.mode = m })
}

// WithHandler sets the function called once for each distinct violation,
// from the goroutine that caused it, with no syncwatch lock held. A handler
// may lock lockorder mutexes and may panic: the panic reaches the caller of
// the Lock (or Await, Apply...) that found the violation, whose state is
// left consistent. A nil handler restores the default, which writes the
// report to standard error.
func WithHandler(h func(Violation)) Option {
	return optionFunc(func(c *settings) { c.handler = h })
}

// WithHeldProfile turns on (or off) the live profiles named
// [HeldProfileName] (locks held right now, where they were taken) and
// [WaitingProfileName] (goroutines blocked on locks right now), in
// ModeCheck. They are off by default, since each entry costs a stack
// capture; turn them on while investigating hangs. Setting the environment
// variable SYNCWATCH_HELD_PROFILE=1 turns them on at start-up. Holds taken
// while they were off are not listed.
func WithHeldProfile(on bool) Option {
	return optionFunc(func(s *settings) { s.heldProfile = on })
}

// WithWaitThreshold sets how long a lock wait must last before it is traced
// (a "lock wait" span, in trace and check modes). The default is 10ms.
// A negative duration panics.
func WithWaitThreshold(d time.Duration) Option {
	if d < 0 {
		panic("lockorder: negative wait threshold")
	}
	return optionFunc(func(c *settings) { c.waitThreshold = d })
}

// DeadlockAction says what happens when a deadlock is found: see
// [WithDeadlockAction].
type DeadlockAction int

const (
	// DeadlockReport reports the deadlock (handler, Violations, span) and
	// leaves the goroutines blocked, as sync would. The default outside
	// tests.
	DeadlockReport DeadlockAction = iota
	// DeadlockPanic reports the deadlock, then panics with it, which ends
	// the program: under go test the test binary fails at once, naming the
	// cycle, instead of hanging until -timeout. The default under go test.
	//
	// It acts only on proof: a goroutine waiting for itself (Once.Do in
	// its own function), or the runtime's leak detection (Go 1.27; Go 1.26
	// built with GOEXPERIMENT=goroutineleakprofile). A wait blocked for
	// good outside any cycle is acted on only if it holds up a test or
	// main: otherwise it is a leaked goroutine, which the program goes on
	// without, as with sync, and is reported as leaked-goroutine. A
	// deadlock seen only as every goroutine blocked is reported, in full
	// at once, but not acted on: a timer (time.AfterFunc, a timer's channel, a deadline)
	// may still wake a goroutine that ends it, and only the runtime sees
	// timers. Such a test ends at its -timeout, as with sync, and its
	// report is marked expected if the waits end after all.
	DeadlockPanic
)

// WithDeadlockAction sets what happens when goroutines are found
// deadlocked. An unknown action panics.
func WithDeadlockAction(a DeadlockAction) Option {
	if a != DeadlockReport && a != DeadlockPanic {
		panic(fmt.Sprintf("lockorder: unknown DeadlockAction %d", int(a)))
	}
	return optionFunc(func(c *settings) { c.deadlockAction = a })
}

// WithLongWait sets how long a wait in a syncwatch primitive may last
// without progress before it is reported as a long-wait, with the holder
// and what it is doing. A wait for a lock that changes hands meanwhile (a
// queue of writers that moves) counts from the last hand-off, and a
// WaitGroup.Wait from the last time fewer tasks were left: contention and
// tasks that keep finishing are not reported. The default is 5s in ModeCheck and none in
// ModeTrace (where WithWaitThreshold's spans trace slow waits). Zero turns the reports off;
// a negative duration panics.
func WithLongWait(d time.Duration) Option {
	if d < 0 {
		panic("lockorder: negative long-wait bound")
	}
	return optionFunc(func(c *settings) { c.longWait, c.longWaitSet = d, true })
}
