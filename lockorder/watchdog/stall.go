package watchdog

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// How old a goroutine dump may be to say what a stalled loop's goroutine
// is doing. Each dump stops the world, so they are rate-limited; but a
// dump older than the wait it explains may not show the goroutine holding
// what is waited for (one started after the dump looks as if it had
// exited). So a dump is reused while it is younger than the stall and
// than the loop goroutine's wait, and at least minDumpAge old (or the
// loop's bound, if shorter), at most maxDumpAge: one a second for stalls
// and waits over a second old, however many loops stall and however
// often [Stalls] is called.
const (
	minDumpAge = 100 * time.Millisecond
	maxDumpAge = time.Second
)

// Stall describes a loop that has work pending and has not stepped for
// longer than its bound.
type Stall struct {
	// Loop is the loop's name.
	Loop string
	// Since is when the stall clock started: the loop's latest Step, or
	// when work last became pending if that is later. For is how long ago
	// that was, and Bound the loop's bound, which For exceeds.
	Since time.Time
	For   time.Duration
	Bound time.Duration
	// Pending is the work pending.
	Pending int
	// Goroutine is the goroutine of the loop's latest Step, 0 if it never
	// stepped.
	Goroutine int64
	// BlockedOn says what Goroutine is blocked on, from syncwatch's
	// wait-for graph when it is in a syncwatch wait ("lock ledger#1, held
	// by goroutine 28, which is blocked in select at ..."), else from a
	// goroutine dump ("chan receive at main.worker (worker.go:42), not a
	// syncwatch wait").
	BlockedOn string
	// Holder is the goroutine holding the lock the loop waits for, when
	// it is known (lockorder's check mode).
	Holder int64

	frames, holderFrames []stack.Frame
}

// Status is a loop's state at one instant.
type Status struct {
	// Name and Bound are the loop's.
	Name  string
	Bound time.Duration
	// Pending is the work pending, Steps the Steps so far, LastStep the
	// latest (zero before the first) and Goroutine its goroutine.
	Pending   int
	Steps     uint64
	LastStep  time.Time
	Goroutine int64
	// Stalls counts the stall episodes reported so far.
	Stalls uint64
	// Stall describes the loop's stall, nil unless it is stalled now.
	Stall *Stall
}

// scene is one shared look at the waits, for explaining several stalls:
// a snapshot of the wait-for graph, taken only if a stall needs it.
type scene struct {
	g *waitfor.Graph
}

func newScene() *scene { return &scene{} }

func (s *scene) graph() *waitfor.Graph {
	if s.g == nil {
		s.g = waitfor.Snapshot()
	}
	return s.g
}

// goroutines returns a goroutine dump for st, which has lasted st.For
// and whose goroutine is in w, a syncwatch wait, or none.
func (s *scene) goroutines(st *Stall, w *waitfor.Wait) *waitfor.Dump {
	age := st.For
	if w != nil {
		age = min(age, w.Age())
	}
	return waitfor.Recent(min(max(age, min(minDumpAge, st.Bound)), maxDumpAge))
}

// stall describes lk, a stalled look at l.
func (l *Loop) stall(lk look, sc *scene) Stall {
	d := mono.Since(lk.since)
	st := Stall{
		Loop:      l.name,
		Since:     time.Now().Add(-d),
		For:       d,
		Bound:     l.cfg.bound,
		Pending:   lk.pending,
		Goroutine: l.gid.Load(),
	}
	st.BlockedOn = st.explain(sc)
	return st
}

// explain says what the loop's goroutine is blocked on.
func (st *Stall) explain(sc *scene) string {
	gid := st.Goroutine
	if gid == 0 {
		return "unknown: the loop never called Step, so its goroutine is not known"
	}
	w := sc.graph().Wait(gid)
	d := sc.goroutines(st, w)
	if r, ok := d.Routine(gid); ok {
		st.frames = r.Frames
	}
	if w != nil {
		if h := w.Holder(); h != 0 {
			st.Holder = h
			if r, ok := d.Routine(h); ok {
				st.holderFrames = r.Frames
			}
		}
		return strings.TrimPrefix(sc.graph().Explain(w, d), "waiting for ")
	}
	r, ok := d.Routine(gid)
	switch {
	case !ok:
		return fmt.Sprintf("nothing: goroutine %d, which last called Step, has exited", gid)
	case r.State == "running" || r.State == "runnable":
		return "nothing: it is " + r.State + where(r) + ", not blocked (busy, or stepping elsewhere)"
	}
	return r.State + where(r) + ", not a syncwatch wait"
}

func where(r waitfor.Routine) string {
	if len(r.Frames) == 0 {
		return ""
	}
	return " at " + r.Frames[0].String()
}

// Check returns a *[StallError] if the loop is stalled now, nil if not.
// It may take a goroutine dump (at most one a second, shared) to say what
// the loop is blocked on.
func (l *Loop) Check() error {
	lk := l.look(mono.Now())
	if !lk.stalled {
		return nil
	}
	return &StallError{Stall: l.stall(lk, newScene())}
}

// Status returns the loop's state now.
func (l *Loop) Status() Status { return l.status(newScene()) }

func (l *Loop) status(sc *scene) Status {
	lk := l.look(mono.Now())
	s := Status{
		Name:      l.name,
		Bound:     l.cfg.bound,
		Pending:   max(lk.pending, 0),
		Steps:     l.steps.Load(),
		Goroutine: l.gid.Load(),
	}
	if last := l.lastStep.Load(); last != 0 {
		s.LastStep = time.Now().Add(-mono.Since(last))
	}
	l.mu.Lock()
	s.Stalls = l.episodes
	l.mu.Unlock()
	if lk.stalled {
		st := l.stall(lk, sc)
		s.Stall = &st
	}
	return s
}

// Stalls returns the loops stalled now, in the order they were created,
// each with what it is blocked on. With no loop stalled it costs one look
// at each open loop and takes no goroutine dump.
func Stalls() []Stall {
	var out []Stall
	now, sc := mono.Now(), newScene()
	for _, l := range openLoops() {
		if lk := l.look(now); lk.stalled {
			out = append(out, l.stall(lk, sc))
		}
	}
	return out
}

// Loops returns the state of every loop not closed, in the order they
// were created.
func Loops() []Status {
	loops := openLoops()
	out := make([]Status, len(loops))
	sc := newScene()
	for i, l := range loops {
		out[i] = l.status(sc)
	}
	return out
}

// ErrStalled matches every *[StallError].
var ErrStalled = errors.New("watchdog: loop stalled")

// StallError reports a stalled loop. It matches [ErrStalled].
type StallError struct {
	Stall
}

// Error says which loop stalled, for how long, and on what.
func (e *StallError) Error() string {
	return fmt.Sprintf("watchdog: loop %s stalled: no step for %v (bound %v) with %d pending, blocked on %s",
		e.Loop, e.For.Round(time.Millisecond), e.Bound, e.Pending, e.BlockedOn)
}

// Unwrap returns [ErrStalled].
func (e *StallError) Unwrap() error { return ErrStalled }

// ErrorType returns "stalled", for telemetry's error.type.
func (e *StallError) ErrorType() string { return string(KindStalled) }
