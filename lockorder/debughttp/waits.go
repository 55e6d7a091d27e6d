package debughttp

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// maxWaits bounds the waits listed; maxStack the frames of each stack.
const (
	maxWaits = 500
	maxStack = 12
)

// How old a goroutine dump may be. Each stops the world, so dumps are
// shared with the rest of syncwatch and reused while they are younger
// than the youngest wait shown (a dump older than a wait may not show the
// goroutine holding what is waited for: one started after the dump looks
// as if it had exited), and at least minDumpAge old: at most ten a second
// however many requests come, one a second while every wait is older.
const (
	minDumpAge = 100 * time.Millisecond
	maxDumpAge = time.Second
)

// Wait is a goroutine blocked in a syncwatch wait: what it waits for,
// since when, who can release it and what they are doing.
type Wait struct {
	Goroutine int64 `json:"goroutine"`
	// Kind is the kind of wait: lock, rlock, once, waitgroup, cond,
	// barrier, clock, watch.
	Kind       string `json:"kind"`
	WaitingFor string `json:"waiting_for"`
	Since      string `json:"since"`
	// SinceSeconds is how long it has waited.
	SinceSeconds float64 `json:"since_seconds"`
	// Holder is the goroutine holding the lock waited for, when known
	// (check mode).
	Holder int64 `json:"holder,omitempty"`
	// BlockedBy lists the goroutines that can end the wait, each with
	// what it is doing now.
	BlockedBy []Blocker `json:"blocked_by,omitempty"`
	// Why follows the chain of waits in words.
	Why string `json:"why"`
	// Holds lists the locks the goroutine holds while it waits (check
	// mode).
	Holds []string `json:"holds,omitempty"`
	// Bounded marks a wait that ends by itself (a timeout, a context).
	Bounded bool `json:"bounded,omitempty"`
	// InCycle marks a wait in a cycle of waits.
	InCycle bool `json:"in_cycle,omitempty"`
	// State is what the runtime says of the goroutine ("sync.Mutex.Lock",
	// "chan receive"), and Stack where it is, innermost frame first.
	State string   `json:"state,omitempty"`
	Stack []string `json:"stack,omitempty"`
}

// Blocker is a goroutine a wait needs, and what it is doing now.
type Blocker struct {
	Goroutine int64  `json:"goroutine"`
	Doing     string `json:"doing"`
}

// Deadlock is a cycle of waits that has lasted at least [DeadlockGrace]:
// each goroutine waits for the next, and none of the waits ends by
// itself.
type Deadlock struct {
	Since        string  `json:"since"`
	SinceSeconds float64 `json:"since_seconds"`
	// Cycle says it in one line: "goroutine 7 waits for lock a#1, held by
	// goroutine 8; goroutine 8 waits for lock b#1, held by goroutine 7".
	Cycle string `json:"cycle"`
	// Locks lists the locks waited for.
	Locks []string `json:"locks,omitempty"`
	// Goroutines are the cycle's waits, with their stacks.
	Goroutines []Wait `json:"goroutines"`
}

// scene is one look at the waits: the wait-for graph and, if anything
// waits, a recent goroutine dump.
type scene struct {
	graph    *waitfor.Graph
	dump     *waitfor.Dump
	youngest time.Duration // age of the youngest wait
	cycles   [][]*waitfor.Wait
	in       map[int64]bool // goroutines in a cycle
}

func newScene() *scene {
	s := &scene{graph: waitfor.Snapshot(), in: map[int64]bool{}, youngest: maxDumpAge}
	for _, w := range s.graph.Waits() {
		s.youngest = min(s.youngest, w.Age())
	}
	s.cycles = s.graph.Cycles()
	for _, c := range s.cycles {
		for _, w := range c {
			s.in[w.Goroutine] = true
		}
	}
	return s
}

// goroutines returns a goroutine dump younger than the waits, within
// the limits.
func (s *scene) goroutines() *waitfor.Dump {
	if s.dump == nil {
		s.dump = waitfor.Recent(max(s.youngest, minDumpAge))
	}
	return s.dump
}

// deadlocks returns the cycles that have lasted the grace period.
func (s *scene) deadlocks() []Deadlock {
	var out []Deadlock
	for _, c := range s.cycles {
		age := c[0].Age()
		for _, w := range c[1:] {
			age = min(age, w.Age())
		}
		if age < DeadlockGrace {
			continue
		}
		d := Deadlock{Since: registry.Ago(age), SinceSeconds: age.Seconds()}
		var parts []string
		for i, w := range c {
			next := c[(i+1)%len(c)]
			parts = append(parts, fmt.Sprintf("goroutine %d waits for %s, %s goroutine %d", w.Goroutine, waitfor.Describe(w), waitfor.Relation(w), next.Goroutine))
			if w.IsLock() {
				d.Locks = append(d.Locks, w.Name())
			}
			d.Goroutines = append(d.Goroutines, s.wait(w))
		}
		d.Cycle = strings.Join(parts, "; ")
		out = append(out, d)
	}
	return out
}

// waits returns every registered wait, oldest first.
func (s *scene) waits() []Wait {
	ws := s.graph.Waits()
	out := make([]Wait, 0, min(len(ws), maxWaits))
	for _, w := range ws[:min(len(ws), maxWaits)] {
		out = append(out, s.wait(w))
	}
	return out
}

// wait describes one wait.
func (s *scene) wait(w *waitfor.Wait) Wait {
	d := s.goroutines()
	age := w.Age()
	out := Wait{
		Goroutine:    w.Goroutine,
		Kind:         w.Kind,
		WaitingFor:   waitfor.Describe(w),
		Since:        registry.Ago(age),
		SinceSeconds: age.Seconds(),
		Holder:       w.Holder(),
		Why:          s.graph.Explain(w, d),
		Bounded:      w.Bounded,
		InCycle:      s.in[w.Goroutine],
	}
	for i, b := range s.graph.Blockers(w) {
		if i == 8 {
			break
		}
		out.BlockedBy = append(out.BlockedBy, Blocker{Goroutine: b, Doing: s.doing(b)})
	}
	for _, h := range w.Holds {
		if h.Valid(w.Goroutine) {
			name := h.Lock.Name()
			if h.Read {
				name += " (read)"
			}
			out.Holds = append(out.Holds, name)
		}
	}
	if r, ok := d.Routine(w.Goroutine); ok {
		out.State = r.State
		out.Stack = frames(r.Frames)
	}
	return out
}

// doing says what goroutine id is doing: its syncwatch wait, or what the
// dump shows.
func (s *scene) doing(id int64) string {
	if w := s.graph.Wait(id); w != nil {
		return "waiting for " + waitfor.Describe(w)
	}
	return waitfor.RoutineState(s.goroutines(), id)
}

func frames(fs []stack.Frame) []string {
	out := make([]string, 0, min(len(fs), maxStack))
	for _, f := range fs[:min(len(fs), maxStack)] {
		out = append(out, f.String())
	}
	return slices.Clip(out)
}
