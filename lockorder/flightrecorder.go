//go:build !syncwatch_off

package lockorder

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncwatch/syncwatch/internal/mono"
)

// flightKinds are the kinds whose report writes the flight recorder's
// trace: the hangs, and the waits that give up on one. stalled and
// barrier-broken are reported by watchdog and barrier.
var flightKinds = map[Kind]bool{
	KindDeadlock:     true,
	"stalled":        true,
	"barrier-broken": true,
	KindWaitTimeout:  true,
	KindLongWait:     true,
}

// flightRecorder is one running flight recorder.
type flightRecorder struct {
	conf flightConfig
	fr   *trace.FlightRecorder

	files *flightFiles // the files this process wrote to conf.dir

	mu       sync.Mutex // serializes writes and Stop; guards what follows
	stopped  bool       // fr has been stopped: nothing more is written
	lastAt   int64      // mono reading of the last file written
	lastPath string
	lastKind Kind
}

// flightFiles are the trace files this process wrote to one directory,
// oldest first: the only files pruning may delete. A recorder started
// again on the same directory, after a stop or a change of window, takes
// them over, so the bound holds across Configure calls. At most
// FlightRecorderFiles are kept.
type flightFiles struct {
	dir   string
	mu    sync.Mutex // a leaf: taken under flightRecorder.mu
	paths []string
}

// add records path as written and returns the paths beyond the bound,
// oldest first, which the caller deletes.
func (f *flightFiles) add(path string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paths = append(f.paths, path)
	n := len(f.paths) - FlightRecorderFiles
	if n <= 0 {
		return nil
	}
	old := slices.Clone(f.paths[:n])
	f.paths = slices.Delete(f.paths, 0, n)
	return old
}

// remove forgets path, a file deleted by discard.
func (f *flightFiles) remove(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.paths, path); i >= 0 {
		f.paths = slices.Delete(f.paths, i, i+1)
	}
}

// flightCur is the running recorder, nil if none. Configure starts and
// stops it (under configMu); publishing loads it.
var flightCur atomic.Pointer[flightRecorder]

// flightLast is the files of the last recorder started, kept when it
// stops for the next one on its directory. Under configMu.
var flightLast *flightFiles

// applyFlightRecorder starts, restarts or stops the recorder to match c.
// Called by Configure, under configMu.
func applyFlightRecorder(c *config) {
	cur := flightCur.Load()
	if (cur == nil && c.flight.dir == "") || (cur != nil && cur.conf == c.flight) {
		return
	}
	if cur != nil {
		flightCur.Store(nil)
		cur.stop()
	}
	if c.flight.dir == "" {
		return
	}
	if flightLast == nil || flightLast.dir != c.flight.dir {
		flightLast = &flightFiles{dir: c.flight.dir}
	}
	if err := os.MkdirAll(c.flight.dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "lockorder: flight recorder not started: %v\n", err)
		return
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: c.flight.window, MaxBytes: FlightRecorderMaxBytes})
	if err := fr.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "lockorder: flight recorder not started: %v\n", err)
		return
	}
	flightCur.Store(&flightRecorder{conf: c.flight, fr: fr, files: flightLast})
}

// stop stops the recorder once no write is in progress: the runtime's
// FlightRecorder.Stop does not wait for a WriteTo, and must not run
// beside one.
func (r *flightRecorder) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.fr.Stop()
}

// flightFile is a trace file written for a violation not yet recorded:
// if the violation turns out to be a duplicate, discard removes it.
type flightFile struct {
	r                  *flightRecorder
	path               string
	prevAt             int64
	prevPath, prevKind string
}

// recordFlight writes the flight recorder's trace for v, if a recorder
// runs and v's kind calls for it, and names the file in v. Within a
// window of the last file, it names that one instead. It runs on the
// reporting goroutine with no internal lock held.
func recordFlight(v *Violation) flightFile {
	r := flightCur.Load()
	if r == nil || !flightKinds[v.Kind] {
		return flightFile{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped { // Configure stopped it after v's reporter loaded it
		return flightFile{}
	}
	now := mono.Now()
	if r.lastPath != "" && time.Duration(now-r.lastAt) < r.conf.window {
		annotate(v, r.lastPath, traceWrittenNote(time.Duration(now-r.lastAt), string(r.lastKind), r.conf.window, r.lastPath))
		return flightFile{}
	}
	path, err := r.write(v.Kind)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockorder: flight recorder: %v\n", err)
		return flightFile{}
	}
	f := flightFile{r: r, path: path, prevAt: r.lastAt, prevPath: r.lastPath, prevKind: string(r.lastKind)}
	r.lastAt, r.lastPath, r.lastKind = now, path, v.Kind
	annotate(v, path, traceNote(r.conf.window, path))
	for _, old := range r.files.add(path) {
		os.Remove(old)
	}
	return f
}

// discard removes a file written for a violation that was a duplicate,
// and gives the window back to the next report.
func (f flightFile) discard() {
	if f.r == nil {
		return
	}
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	os.Remove(f.path)
	f.r.files.remove(f.path)
	if f.r.lastPath == f.path {
		f.r.lastAt, f.r.lastPath, f.r.lastKind = f.prevAt, f.prevPath, Kind(f.prevKind)
	}
}

// annotate names the trace file in v's Detail and attributes, without
// touching the caller's slice.
func annotate(v *Violation, path, line string) {
	if v.Detail != "" {
		line = strings.TrimRight(v.Detail, "\n") + "\n" + line
	}
	v.Detail = line
	v.Attrs = append(slices.Clip(v.Attrs), attribute.String(TraceFileAttribute, path))
}

// write writes the recorder's window to a new file in its directory, and
// returns the file's path. The file appears complete or not at all.
func (r *flightRecorder) write(kind Kind) (string, error) {
	base := fmt.Sprintf("syncwatch-%s-%s-%d", time.Now().UTC().Format("20060102T150405.000Z"), kind, os.Getpid())
	tmp, err := os.CreateTemp(r.conf.dir, ".syncwatch-*.tmp")
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriterSize(tmp, 1<<16)
	_, err = r.fr.WriteTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	var path string
	if err == nil {
		path, err = place(tmp.Name(), r.conf.dir, base)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}

// maxNameTries bounds the names place tries for one file.
const maxNameTries = 100

// place gives the complete file tmp its name in dir: base.trace or, if
// that is taken (two reports within a millisecond, or another process
// with the same pid), base-2.trace and so on. A hard link fails rather
// than replace a file; where the file system has no hard links, the file
// is renamed.
func place(tmp, dir, base string) (string, error) {
	for i := 1; i <= maxNameTries; i++ {
		name := base + ".trace"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.trace", base, i)
		}
		path := filepath.Join(dir, name)
		err := os.Link(tmp, path)
		switch {
		case err == nil:
			os.Remove(tmp)
			return path, nil
		case !errors.Is(err, fs.ErrExist):
			return path, os.Rename(tmp, path)
		}
	}
	return "", fmt.Errorf("no free name for %s.trace in %s", base, dir)
}
