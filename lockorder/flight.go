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
// last file refers to that file. The directory keeps at most
// [FlightRecorderFiles] of them (named syncwatch-TIME-KIND-PID.trace; the
// oldest are deleted) of at most about [FlightRecorderMaxBytes] each. The
// file is written on the goroutine that reports, before the handler is
// called, so a handler can read it.
//
// An empty dir stops the recorder. The runtime allows one flight recorder
// per process: if another is running, or dir cannot be created, the error
// is printed to standard error and none is started. Recording costs what
// execution tracing costs, a few percent of CPU in most programs. The
// syncwatch_off build ignores the option. A negative window panics; zero
// lets the runtime choose (a few seconds).
func WithFlightRecorder(dir string, window time.Duration) Option {
	if window < 0 {
		panic("lockorder: negative flight recorder window")
	}
	if dir != "" {
		dir = filepath.Clean(dir)
	}
	return optionFunc(func(s *settings) { s.flight = flightConfig{dir: dir, window: window} })
}
