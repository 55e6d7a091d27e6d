//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder"
)

// traceReader is the runtime's reader of execution-trace data: on Go 1.25
// it outlives a stopped flight recorder until the runtime's trace ends.
var traceReader = goleak.IgnoreTopFunction("runtime/trace.runtime_readTrace")

// flightRecorder starts a flight recorder writing to a new directory for
// the duration of t.
func flightRecorder(t *testing.T, window time.Duration) string {
	dir := t.TempDir()
	flightRecorderIn(t, dir, window)
	return dir
}

// flightRecorderIn starts a flight recorder writing to dir for the
// duration of t.
func flightRecorderIn(t *testing.T, dir string, window time.Duration) {
	lockorder.Configure(lockorder.WithFlightRecorder(dir, window))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithFlightRecorder("", 0)) })
}

// timeOut makes a LockContext give up at its deadline: a wait-timeout.
func timeOut(t *testing.T, m *lockorder.Mutex) {
	t.Helper()
	m.Lock()
	defer m.Unlock()
	run(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		assert.Error(t, m.LockContext(ctx))
	})
}

func traceFile(v lockorder.Violation) string {
	for _, a := range v.Attrs {
		if a.Key == lockorder.TraceFileAttribute {
			return a.Value.AsString()
		}
	}
	return ""
}

// A wait-timeout writes the last seconds of execution trace to a file
// named in the report and its span, which go tool trace can read.
func TestFlightRecorderWritesATraceForAWaitTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, traceReader)
	fresh(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	lockorder.Configure(lockorder.WithTracerProvider(tp))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithTracerProvider(otel.GetTracerProvider())) })
	dir := flightRecorder(t, time.Second)

	timeOut(t, lockorder.NewMutex("flight"))
	vs := only(lockorder.KindWaitTimeout)
	require.Len(t, vs, 1)
	path := traceFile(vs[0])
	require.NotEmpty(t, path, "the report names the trace file")
	assert.Equal(t, dir, filepath.Dir(path))
	assert.Contains(t, vs[0].Detail, "execution trace of the 1s before this report: "+path)
	assert.Contains(t, filepath.Base(path), "-wait-timeout-")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Positive(t, info.Size())

	var spanFile string
	for _, s := range rec.Ended() {
		if s.Name() == string(lockorder.KindWaitTimeout) {
			set := attribute.NewSet(s.Attributes()...)
			v, _ := set.Value(lockorder.TraceFileAttribute)
			spanFile = v.AsString()
		}
	}
	assert.Equal(t, path, spanFile, "the span names it too")

	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to read the trace with")
	}
	// -d=parsed runs the trace parser over every event, as the viewer does.
	var stderr strings.Builder
	cmd := exec.Command(goTool, "tool", "trace", "-d=parsed", path)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	require.NoError(t, cmd.Run(), "go tool trace reads the file: %s", stderr.String())
}

// Within a window of the last file, a report names that file instead of
// writing another.
func TestFlightRecorderIsRateLimited(t *testing.T) {
	defer goleak.VerifyNone(t, traceReader)
	fresh(t)
	flightRecorder(t, time.Hour)
	timeOut(t, lockorder.NewMutex("flight-a"))
	timeOut(t, lockorder.NewMutex("flight-b"))
	vs := only(lockorder.KindWaitTimeout)
	require.Len(t, vs, 2)
	first := traceFile(vs[0])
	assert.Equal(t, first, traceFile(vs[1]))
	assert.Contains(t, vs[1].Detail, "execution trace written ")
	assert.Contains(t, vs[1].Detail, "before this report, for a wait-timeout report (at most one per 1h0m0s): "+first)

}

// stalls reports n stalled loops at once, as a watchdog does in a burst,
// and returns the trace files the reports name.
func stalls(t *testing.T, from, n int) []string {
	t.Helper()
	for i := from; i < from+n; i++ {
		lockorder.Report(lockorder.Violation{Kind: "stalled", Message: fmt.Sprintf("loop %d has stalled", i)})
	}
	vs := only("stalled")
	require.Len(t, vs, from+n)
	var files []string
	for _, v := range vs[from:] {
		files = append(files, traceFile(v))
	}
	return files
}

// A zero window is the runtime's default, 10 seconds: a burst of reports
// writes one file, which all of them name.
func TestFlightRecorderZeroWindowWritesOneFilePerBurst(t *testing.T) {
	defer goleak.VerifyNone(t, traceReader)
	fresh(t)
	dir := flightRecorder(t, 0)
	named := stalls(t, 0, 20)
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.Len(t, files, 1, "one file for the burst")
	for _, f := range named {
		assert.Equal(t, files[0], f)
	}
	assert.Contains(t, only("stalled")[1].Detail, "(at most one per 10s): "+files[0])
}

// Pruning deletes only the oldest of the files this process wrote, also
// across restarts of the recorder on the same directory; trace files
// that other processes wrote to the directory are kept, however old.
func TestFlightRecorderPrunesOnlyItsOwnFiles(t *testing.T) {
	defer goleak.VerifyNone(t, traceReader)
	fresh(t)
	dir := t.TempDir()
	var foreign []string
	for i := range lockorder.FlightRecorderFiles + 2 {
		name := filepath.Join(dir, fmt.Sprintf("syncwatch-20000101T00000%d.000Z-deadlock-1.trace", i))
		require.NoError(t, os.WriteFile(name, nil, 0o600))
		foreign = append(foreign, name)
	}
	flightRecorderIn(t, dir, time.Nanosecond) // every report writes a file
	own := stalls(t, 0, lockorder.FlightRecorderFiles+2)
	lockorder.Configure(lockorder.WithFlightRecorder(dir, 2*time.Nanosecond)) // a restart keeps the bound
	own = append(own, stalls(t, len(own), 1)...)
	lockorder.Configure(lockorder.WithFlightRecorder("", 0)) // and so does a stop and a start
	lockorder.Configure(lockorder.WithFlightRecorder(dir, time.Nanosecond))
	own = append(own, stalls(t, len(own), 1)...)

	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	assert.Subset(t, files, foreign, "other processes' files are kept")
	kept := own[len(own)-lockorder.FlightRecorderFiles:]
	assert.Subset(t, files, kept, "this process's newest files are kept")
	assert.Len(t, files, len(foreign)+lockorder.FlightRecorderFiles, "this process's oldest files are deleted")
	for _, f := range own[:len(own)-lockorder.FlightRecorderFiles] {
		assert.NoFileExists(t, f)
	}
}

// Kinds that are not hangs write nothing.
func TestFlightRecorderOnlyForHangs(t *testing.T) {
	defer goleak.VerifyNone(t, traceReader)
	fresh(t)
	dir := flightRecorder(t, time.Second)
	lockorder.Report(lockorder.Violation{Kind: "custom", Message: "not a hang"})
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, files)
	assert.Empty(t, traceFile(only("custom")[0]))
	assert.False(t, strings.Contains(only("custom")[0].Detail, "trace"))
}

// Configure may stop the recorder while a report is writing its trace:
// the stop waits for the write (the runtime's recorder must not be
// stopped beside a write: go test -race caught it), and a report that
// loaded the recorder before the stop writes nothing after it.
func TestFlightRecorderStopsBesideAWrite(t *testing.T) {
	defer goleak.VerifyNone(t, traceReader)
	fresh(t)
	dir := flightRecorder(t, time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			lockorder.Report(lockorder.Violation{Kind: "stalled", Message: fmt.Sprintf("loop %d has stalled", i)})
			time.Sleep(time.Millisecond) // pacing: reports spread over the toggles below
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			assert.NotEmpty(t, only("stalled"))
			return
		default:
		}
		if i%2 == 0 {
			lockorder.Configure(lockorder.WithFlightRecorder("", 0))
		} else {
			lockorder.Configure(lockorder.WithFlightRecorder(dir, time.Millisecond))
		}
		time.Sleep(3 * time.Millisecond) // pacing, not synchronisation: any interleaving will do
	}
}
