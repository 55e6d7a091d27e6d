package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/debughttp"
)

// service runs the whole service, as -serve does, in check mode with a
// flight recorder writing to a temporary directory and the worker loop
// bound to bound. It returns the service's URL and the trace directory;
// everything stops when t ends.
func service(t *testing.T, bound time.Duration) (string, string) {
	t.Helper()
	dir := t.TempDir()
	lockorder.Configure(
		lockorder.WithMode(lockorder.ModeCheck),
		lockorder.WithDeadlockAction(lockorder.DeadlockReport), // not the tests' panic: the service lives on
		lockorder.WithHandler(func(lockorder.Violation) {}),
		lockorder.WithFlightRecorder(dir, time.Second))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	inv := NewInventory()
	worker := StartWorker(inv, bound)
	bugs := NewBugs(worker, base)
	srv := &http.Server{Handler: newMux(inv, worker, bugs, otel.GetTracerProvider()), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		bugs.Release()
		worker.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, srv.Shutdown(ctx))
		assert.ErrorIs(t, <-served, http.ErrServerClosed)
		lockorder.Configure(lockorder.WithFlightRecorder("", 0), lockorder.WithDeadlockAction(lockorder.DeadlockPanic))
		lockorder.Reset()
	})
	return base, dir
}

// className returns the class of a lock name "class#N".
func className(lock string) string {
	c, _, _ := strings.Cut(lock, "#")
	return c
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func health(t *testing.T, base string) (int, debughttp.HealthReport) {
	t.Helper()
	code, body := fetch(t, base+"/healthz")
	var h debughttp.HealthReport
	require.NoError(t, json.Unmarshal([]byte(body), &h), body)
	return code, h
}

// An idle service is healthy however long it idles: the watchdog that
// cried wolf after five idle minutes was a bug.
func TestIdleServiceStaysHealthy(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	const bound = 20 * time.Millisecond
	base, _ := service(t, bound)
	code, _ := fetch(t, base+"/healthz")
	require.Equal(t, http.StatusOK, code)
	resp, err := http.Post(base+"/recount/widgets", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Eventually(t, func() bool { _, l := fetch(t, base+"/ledger"); return strings.Contains(l, "widgets: 0") },
		10*time.Second, time.Millisecond, "the worker did the job")
	time.Sleep(20 * bound) // idle, twenty bounds
	code, h := health(t, base)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", h.Status)
}

// /bug/stall: once the bound has passed, /healthz answers 503 naming the
// worker loop and what it is blocked on, and a trace file is written.
func TestBugStallMakesHealth503(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	const bound = 200 * time.Millisecond
	base, dir := service(t, bound)
	start := time.Now() // the stall begins after this, once the request is served
	code, body := fetch(t, base+"/bug/stall")
	require.Equal(t, http.StatusAccepted, code, body)
	var h debughttp.HealthReport
	require.Eventually(t, func() bool {
		code, h = health(t, base)
		return code == http.StatusServiceUnavailable
	}, 20*time.Second, 10*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), bound, "not before the bound")
	require.Len(t, h.Stalled, 1)
	s := h.Stalled[0]
	assert.GreaterOrEqual(t, s.SinceSeconds, bound.Seconds(), "stalled for less than the bound")
	assert.Equal(t, "worker", s.Loop)
	assert.Equal(t, 1, s.Pending)
	assert.Contains(t, s.BlockedOn, "lock ledger#")
	assert.Contains(t, s.BlockedOn, ", held by goroutine ")
	assert.Contains(t, s.BlockedOn, "which is blocked in chan receive at ")
	assert.Contains(t, s.BlockedOn, ".(*Bugs).exportLedger (")

	code, _ = fetch(t, base+"/bug/stall")
	assert.Equal(t, http.StatusConflict, code)

	// The stalled report names its execution trace, which go tool trace reads.
	var file string
	require.Eventually(t, func() bool {
		for _, v := range lockorder.Violations() {
			for _, a := range v.Attrs {
				if v.Kind == "stalled" && a.Key == lockorder.TraceFileAttribute {
					file = a.Value.AsString()
				}
			}
		}
		return file != ""
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, dir, filepath.Dir(file))
	if goTool, err := exec.LookPath("go"); err == nil {
		cmd := exec.Command(goTool, "tool", "trace", "-d=parsed", file)
		cmd.Stdout = io.Discard
		out := &strings.Builder{}
		cmd.Stderr = out
		assert.NoError(t, cmd.Run(), out.String())
	}
}

// /bug/abba: the JSON of the live view shows the deadlock cycle with both
// locks, and the page shows it with the stacks.
func TestBugABBAShowsTheCycle(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	base, _ := service(t, time.Minute)
	code, body := fetch(t, base+"/bug/abba")
	require.Equal(t, http.StatusAccepted, code, body)
	var st debughttp.State
	require.Eventually(t, func() bool {
		_, body := fetch(t, base+"/debug/syncwatch?format=json")
		st = debughttp.State{}
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		return len(st.Health.Deadlocks) > 0
	}, 20*time.Second, 20*time.Millisecond)
	d := st.Health.Deadlocks[0]
	require.Len(t, d.Locks, 2)
	assert.ElementsMatch(t, []string{"worker_lock", "aggregation_lock"}, []string{className(d.Locks[0]), className(d.Locks[1])})
	assert.Regexp(t, `waits for lock worker_lock#\d+, held by goroutine `, d.Cycle)
	assert.Regexp(t, `waits for lock aggregation_lock#\d+, held by goroutine `, d.Cycle)
	var frames string
	for _, g := range d.Goroutines {
		frames += strings.Join(g.Stack, "\n")
	}
	assert.Contains(t, frames, ".(*Bugs).aggregate (")
	assert.Contains(t, frames, ".(*Bugs).report (")

	code, page := fetch(t, base+"/debug/syncwatch")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, "Cycle of 2 goroutines")
	assert.Contains(t, page, ".(*Bugs).aggregate (")
	code, _ = health(t, base)
	assert.Equal(t, http.StatusServiceUnavailable, code)
}

// The service as a new user runs it: go run ./examples/service -serve,
// then the endpoints with an HTTP client, then Ctrl-C. Skipped with
// -short: it builds the binary.
func TestServeAsACommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the service")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "service")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	traces := t.TempDir()
	cmd := exec.Command(bin, "-serve", "-stall-bound", "300ms", "-trace-dir", traces)
	cmd.Env = append(os.Environ(), "SYNCWATCH_MODE=", "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 64)
	go func() {
		buf := make([]byte, 4096)
		var acc string
		for {
			n, err := stdout.Read(buf)
			acc += string(buf[:n])
			for {
				i := strings.IndexByte(acc, '\n')
				if i < 0 {
					break
				}
				select {
				case lines <- acc[:i]:
				default:
				}
				acc = acc[i+1:]
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	var base string
	for base == "" {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the service exited: %s", stderr)
			if rest, found := strings.CutPrefix(l, "serving on "); found {
				base, _, _ = strings.Cut(rest, ",")
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the service did not say where it serves")
		}
	}
	code, _ := health(t, base)
	assert.Equal(t, http.StatusOK, code)
	code, _ = fetch(t, base+"/bug/stall")
	require.Equal(t, http.StatusAccepted, code)
	var h debughttp.HealthReport
	require.Eventually(t, func() bool { code, h = health(t, base); return code == http.StatusServiceUnavailable },
		20*time.Second, 20*time.Millisecond)
	assert.Equal(t, "worker", h.Stalled[0].Loop)
	assert.Contains(t, h.Stalled[0].BlockedOn, "lock ledger#1, held by goroutine ")
	// The health check sees the stall the moment the bound passes; the
	// report, with its trace file, comes at the watchdog's next look.
	var trace string
	require.Eventually(t, func() bool {
		_, body := fetch(t, base+"/debug/syncwatch?format=json")
		var st debughttp.State
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		for _, v := range st.Violations {
			if v.Kind == "stalled" {
				trace = v.TraceFile
			}
		}
		return trace != ""
	}, 20*time.Second, 20*time.Millisecond)
	assert.Equal(t, traces, filepath.Dir(trace))

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("the service exited with %v: %s", err, stderr)
		}
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the service did not stop on interrupt")
	}
	assert.Contains(t, stderr.String(), "watchdog: stalled: loop worker has not stepped")
	assert.FileExists(t, trace, "the flight recorder wrote the stall's trace")
}
