package waitfor

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// Routine is what the runtime shows of one goroutine: its state
// ("chan receive", "select", "IO wait", "sleep", "running", ...) and
// where it is, syncwatch's own frames left out.
type Routine struct {
	// State is its state as the dump's header shows it, without the
	// duration ("chan receive", "select, locked to thread").
	State string
	// Frames are where it is, innermost first, syncwatch's and the
	// runtime's frames left out.
	Frames []stack.Frame
	// Top is its innermost function as the runtime prints it, machinery
	// included, and Created the go statement that started it (zero if
	// the dump shows none).
	Top     string
	Created stack.Frame
}

// Dump is every goroutine's stack at one moment, as runtime.Stack prints
// them, indexed by goroutine id. Only the goroutines asked for are parsed.
type Dump struct {
	at    int64 // mono reading
	buf   []byte
	index map[int64][2]int // goroutine id -> its text in buf
}

// Alive reports whether goroutine gid existed when d was taken.
func (d *Dump) Alive(gid int64) bool {
	_, ok := d.index[gid]
	return ok
}

// Exited reports whether goroutine gid, known to have existed before d
// was taken, had exited by then. (Ids are never reused; the runtime hands
// them out in batches, so an id says nothing of when its goroutine began.)
func (d *Dump) Exited(gid int64) bool { return !d.Alive(gid) }

// leaked reports whether the runtime had found goroutine gid blocked for
// good when d was taken (see internal/leak: the mark is made by
// leak.Detect, and kept).
func (d *Dump) leaked(gid int64) bool {
	r, ok := d.Routine(gid)
	if !ok {
		return false
	}
	state, _, _ := strings.Cut(r.State, ", ") // "chan receive (leaked), locked to thread"
	_, leaked := leak.Marked(state)
	return leaked
}

// text returns goroutine gid's text in d, or "".
func (d *Dump) text(gid int64) string {
	span, ok := d.index[gid]
	if !ok {
		return ""
	}
	return string(d.buf[span[0]:span[1]])
}

// LeakedIDs returns the goroutines d shows the runtime found blocked for
// good (see leaked), in increasing order of id.
func (d *Dump) LeakedIDs() []int64 {
	var out []int64
	for id := range d.index {
		if d.leaked(id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// holdsUp reports whether a goroutine d shows the runtime found blocked
// for good holds the program up: a test's goroutine (the test cannot
// end), or the main goroutine, unless it parked itself for good on
// purpose (select {}, a server's main whose work goes on elsewhere).
// Other goroutines blocked for good are leaked: the program goes on
// without them (docs/RULES.md W2).
func (d *Dump) holdsUp() bool {
	for _, id := range d.LeakedIDs() {
		r, _ := d.Routine(id)
		if id == mainGoroutine {
			base, _, _ := strings.Cut(r.State, ", ")
			if state, _ := leak.Marked(base); state != "select (no cases)" {
				return true
			}
		}
		for _, f := range r.Frames {
			if f.Function == "testing.tRunner" || f.Function == "testing.(*B).runN" {
				return true
			}
		}
	}
	return false
}

// mainGoroutine is the id of the goroutine that runs main.main.
const mainGoroutine = 1

// Routine returns goroutine gid as d shows it.
func (d *Dump) Routine(gid int64) (Routine, bool) {
	span, ok := d.index[gid]
	if !ok {
		return Routine{}, false
	}
	text := string(d.buf[span[0]:span[1]])
	header, frames := stack.ParseGoroutine(text)
	top, created := stack.Origin(text)
	return Routine{State: stateOf(header), Frames: frames, Top: top, Created: created}, true
}

// Parent returns the goroutine whose go statement started goroutine gid,
// as d shows it, or 0 if d shows none (gid is not in d, or is main).
func (d *Dump) Parent(gid int64) int64 { return stack.Parent(d.text(gid)) }

// stateOf returns the state in a header "goroutine 7 [chan receive, 2
// minutes]:", without the duration.
func stateOf(header string) string {
	i, j := strings.IndexByte(header, '['), strings.LastIndexByte(header, ']')
	if i < 0 || j < i {
		return ""
	}
	s := header[i+1 : j]
	if k := strings.LastIndex(s, " minutes"); k >= 0 {
		if c := strings.LastIndexByte(s[:k], ','); c >= 0 {
			s = s[:c]
		}
	}
	return s
}

// dumpCount counts the dumps taken, for tests of what stops the world.
var dumpCount atomic.Int64

// DumpCount returns how many goroutine dumps have been taken.
func DumpCount() int64 { return dumpCount.Load() }

// newDump stops the world once to list every goroutine.
func newDump() *Dump {
	dumpCount.Add(1)
	prev, start := stack.LastAllSize(), mono.Now()
	buf := stack.All()
	d := parseDump(buf)
	if len(buf) < max(prev+prev/4, 1<<16) {
		// One pass: a dump that outgrew its buffer stopped the world once
		// per doubling, which is no cost per goroutine of the next.
		learnDumpCost(len(d.index), mono.Now()-start)
	}
	return d
}

// parseDump indexes buf, every goroutine's stack as runtime.Stack prints
// them.
func parseDump(buf []byte) *Dump {
	d := &Dump{at: mono.Now(), buf: buf, index: map[int64][2]int{}}
	for off := 0; off < len(buf); {
		end := bytes.Index(buf[off:], []byte("\n\n"))
		if end < 0 {
			end = len(buf)
		} else {
			end += off
		}
		if id := goid.Parse(buf[off:end]); id != 0 {
			d.index[id] = [2]int{off, end}
		}
		off = end + 2
	}
	return d
}

var dumps struct {
	mu   sync.Mutex
	last *Dump
}

// Recent returns a dump taken at most maxAge ago, taking one if there is
// none. Taking one stops the world, for a time that grows with the number
// of goroutines, so callers that may run often pass a maxAge that rate-
// limits it: at most one dump per maxAge however many ask.
func Recent(maxAge time.Duration) *Dump {
	dumps.mu.Lock()
	defer dumps.mu.Unlock()
	if d := dumps.last; d != nil && mono.Since(d.at) <= maxAge {
		return d
	}
	d := newDump()
	dumps.last = d
	return d
}

// Cached returns the latest dump if it was taken at most maxAge ago, or
// nil. It never takes one: it is for paths that must stay cheap (a bounded
// wait that gives up).
func Cached(maxAge time.Duration) *Dump {
	dumps.mu.Lock()
	defer dumps.mu.Unlock()
	if d := dumps.last; d != nil && mono.Since(d.at) <= maxAge {
		return d
	}
	return nil
}

// States returns every goroutine's state in d ("running", "chan receive",
// "sleep", ...), by id.
func (d *Dump) States() map[int64]string {
	out := make(map[int64]string, len(d.index))
	for id, span := range d.index {
		line := d.buf[span[0]:span[1]]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		out[id] = stateOf(string(line))
	}
	return out
}

// Fresh returns a dump taken now, and keeps it for Recent and Cached.
func Fresh() *Dump {
	d := newDump()
	dumps.mu.Lock()
	dumps.last = d
	dumps.mu.Unlock()
	return d
}
