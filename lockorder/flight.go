package lockorder

import (
	"path/filepath"
	"time"
)

// The flight recorder's bounds: the most trace files it keeps in its
// directory (the oldest are deleted), and the most bytes of trace it keeps
// in memory, and so the most one file holds (a hint to the runtime, which
// may go a little past it).
const (
	FlightRecorderFiles    = 5
	FlightRecorderMaxBytes = 32 << 20
)

// defaultFlightWindow is the window a zero window asks for: the
// runtime's own default minimum age for its flight recorder
// (runtime/trace.NewFlightRecorder), made explicit so that the files
// can be limited to one per window.
const defaultFlightWindow = 10 * time.Second

// TraceFileAttribute is the attribute, in a violation's Attrs and on its
// span, naming the execution trace file written for it (see
// [WithFlightRecorder]).
const TraceFileAttribute = "syncwatch.trace.file"

// flightConfig is what WithFlightRecorder sets.
type flightConfig struct {
	dir    string
	window time.Duration
}

// WithFlightRecorder keeps the last window of Go's execution trace in
// memory (runtime/trace's flight recorder) and, when a deadlock, stalled,
// barrier-broken, wait-timeout or long-wait violation is reported, writes
// it to a file in dir, so that go tool trace shows what led up to it.
// The file's path is added to the violation's Detail and to its span, as
// [TraceFileAttribute].
//
// At most one file is written per window: a report within a window of the
// last file refers to that file. Of the files this process wrote to dir
// (named syncwatch-TIME-KIND-PID.trace, or with -2, -3... before .trace
// if that name is taken), at most [FlightRecorderFiles]
// are kept, of at most about [FlightRecorderMaxBytes] each: the oldest
// are deleted. Files in dir that other processes wrote, or that an
// earlier run of this one left, are never touched. The file is written
// on the goroutine that reports, before the handler is called, so a
// handler can read it.
//
// An empty dir stops the recorder. The runtime allows one flight recorder
// per process: if another is running, or dir cannot be created, the error
// is printed to standard error and none is started. Recording costs what
// execution tracing costs, a few percent of CPU in most programs. The
// syncwatch_off build ignores the option. A negative window panics. A zero
// window is the runtime's default minimum for its flight recorder, 10
// seconds: the trace covers at least that, and files are at most one per
// 10 seconds.
//
// While a flight recorder runs (this one, or any runtime/trace
// FlightRecorder), the runtime keeps a goroutine of its own awake to
// collect the trace, so a program whose every goroutine is blocked is no
// longer ended by the runtime's "all goroutines are asleep" error: a
// deadlock the monitor cannot prove (RULES.md W1, W2) is reported as a
// long-wait, and the program hangs. Give it a bound of its own (a test's
// -timeout, a liveness probe).
func WithFlightRecorder(dir string, window time.Duration) Option {
	if window < 0 {
		panic("lockorder: negative flight recorder window")
	}
	if dir != "" {
		dir = filepath.Clean(dir)
	}
	if window == 0 {
		window = defaultFlightWindow
	}
	return optionFunc(func(s *settings) { s.flight = flightConfig{dir: dir, window: window} })
}
