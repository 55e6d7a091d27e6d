package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/paramserver"
)

// eventLog serializes the report's lines. Its mutex is a plain one: the
// log is not part of the story, and must not appear in the lock graph.
type eventLog struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (l *eventLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// eventf prints a line stamped with the time since the start.
func (l *eventLog) eventf(at time.Time, format string, args ...any) {
	l.printf("[%6s] "+format, append([]any{ms(at.Sub(l.start))}, args...)...)
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

func (s *sim) printIntro() {
	if s.cfg.Fixed {
		s.log.printf("syncwatch: the corrected design for incident IR-2024-0319-001\n"+
			"%d workers train y = w·x + b with the same data and the same schedule, but:\n"+
			"  one lock order (worker_lock, then aggregation_lock) and no lock held at the barrier;\n"+
			"  paramserver.Server: snapshot reads, and the staleness bound (%d) checked where the\n"+
			"  version is published. lockorder is in check mode.\n\n"+
			"phase 1: %d steps, rank %d (the reducer) last at the barrier.\n",
			s.parties, s.maxStaleness, s.sched.steps, s.sched.reducer)
		return
	}
	s.log.printf("syncwatch replay of incident IR-2024-0319-001 (distributed training cluster hang)\n"+
		"%d workers train y = w·x + b through an all-reduce coordinator (barrier of %d, timeout %v)\n"+
		"and a parameter server (staleness bound %d), with the incident's bugs. syncwatch's locks,\n"+
		"barrier and staleness check are dropped in; lockorder is in check mode.\n\n"+
		"phase 1: %d steps on the schedule production ran for months: rank %d, the reducer,\n"+
		"reaches the barrier last, so the two lock orders never overlap.\n",
		s.parties, s.parties, s.cfg.BarrierTimeout, s.maxStaleness, s.sched.steps, s.sched.reducer)
}

// rankOf names goroutine gid by its rank, from the barrier's flight
// recorder; "" if it is not a worker.
func (s *sim) rankOf(gid int64) string {
	h := s.barrier.History()
	for i := len(h) - 1; i >= 0; i-- {
		for _, a := range h[i].Arrivals {
			if a.Goroutine == gid {
				return fmt.Sprintf("rank %d", a.Rank)
			}
		}
	}
	return ""
}

func (s *sim) who(gid int64) string {
	if r := s.rankOf(gid); r != "" {
		return fmt.Sprintf("%s (goroutine %d)", r, gid)
	}
	return fmt.Sprintf("goroutine %d", gid)
}

// printViolation prints what the handler received.
func (s *sim) printViolation(sv seen) {
	v := sv.v
	if v.Kind == paramserver.KindStaleRejected {
		return // printed with its figures by recordStale
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: %s\n", v.Source, v.Kind, v.Message)
	switch v.Kind {
	case lockorder.KindCycle:
		// The edge seen first is the path that ran first.
		edges := slices.SortedFunc(slices.Values(v.Cycle), func(a, b lockorder.Edge) int { return a.Time.Compare(b.Time) })
		for i, e := range edges {
			fmt.Fprintf(&b, "         path %d: %s took %s while holding %s\n", i+1, s.who(e.Goroutine), e.To, e.From)
			writeFrames(&b, e.Stack, 2, "                 ")
		}
		b.WriteString(blockedNote(sv.blocked))
	case lockorder.KindNotHeld:
		// One line per unlocked function; the others are recorded.
		if len(v.Stack) > 0 && !s.cfg.Verbose && !s.firstNotHeld(v.Stack[0].Function) {
			return
		}
		writeFrames(&b, v.Stack, 1, "         at ")
	case barrier.KindLockHeld:
		writeFrames(&b, v.Stack, 1, "         at ")
	case barrier.KindSlow:
		for line := range strings.Lines(v.Detail) {
			b.WriteString("         " + line)
		}
		b.WriteString(blockedNote(sv.blocked))
	case barrier.KindBroken:
		return // printed with the BrokenError the waiters got
	}
	if s.cfg.Verbose {
		for line := range strings.Lines(v.String()) {
			b.WriteString("         | " + line)
		}
	}
	s.log.eventf(sv.at, "%s", b.String())
}

// blockedNote says how many goroutines lockorder's waiting-lock profile
// listed as blocked on a lock when a report was made.
func blockedNote(n int) string {
	switch n {
	case 0:
		return "         no goroutine was blocked on a lock (waiting-lock profile empty): reported before any deadlock\n"
	case 1:
		return "         1 goroutine blocked on a lock (waiting-lock profile)\n"
	}
	return fmt.Sprintf("         %d goroutines blocked on a lock (waiting-lock profile)\n", n)
}

// firstNotHeld reports whether fn is the first function found accessing
// ps_lock's state without it.
func (s *sim) firstNotHeld(fn string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notHeldSeen == nil {
		s.notHeldSeen = map[string]bool{}
	}
	first := !s.notHeldSeen[fn]
	s.notHeldSeen[fn] = true
	return first
}

// writeFrames writes the first n frames of st, file names without their
// directories.
func writeFrames(b *strings.Builder, st lockorder.Stack, n int, indent string) {
	for _, f := range st[:min(n, len(st))] {
		fmt.Fprintf(b, "%s%s (%s:%d)\n", indent, f.Function, filepath.Base(f.File), f.Line)
	}
}

func (s *sim) printStale(e StaleEvent) {
	at := s.start.Add(e.Elapsed)
	if e.Accepted {
		s.log.eventf(at, "worker %d: gradient of version %d applied at version %d: staleness %d, bound %d: accepted (inclusive bound)\n",
			e.Worker, e.Base, e.Current, e.Staleness, e.Max)
		return
	}
	line := fmt.Sprintf("worker %d: gradient of version %d at version %d: staleness %d > bound %d: REJECTED\n",
		e.Worker, e.Base, e.Current, e.Staleness, e.Max)
	if !s.cfg.Fixed {
		// What the incident's check, `if staleness > max + 1:
		// log.warning(...)`, did with the same figures: it never rejected.
		old := "applied it silently"
		if e.Staleness > e.Max+1 {
			old = "logged a WARNING and applied it"
		}
		line += fmt.Sprintf("         (the incident's check %s)\n", old)
	}
	s.log.eventf(at, "%s", line)
}

func (s *sim) printBroken(be *barrier.BrokenError) {
	var b strings.Builder
	fmt.Fprintf(&b, "barrier %s generation %d broke after %v: %d/%d arrived, missing %v\n",
		be.Barrier, be.Generation, be.Waited.Round(time.Millisecond), len(be.Arrived), be.Parties, be.Missing)
	for _, m := range be.Why {
		fmt.Fprintf(&b, "         %s\n", m)
	}
	if s.cfg.Verbose {
		for line := range strings.Lines(be.Report()) {
			b.WriteString("         | " + line)
		}
	}
	s.log.eventf(time.Now(), "%s", b.String())
}
