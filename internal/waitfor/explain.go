package waitfor

import (
	"fmt"
	"strings"

	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/internal/leak"
)

// Describe names what w waits for: "lock store#1", "read lock cache#2",
// "once config", "barrier allreduce (rank 3, generation 41)".
func Describe(w *Wait) string {
	var s string
	name := w.Name()
	switch w.Kind {
	case KindLock:
		s = "lock " + name
	case KindRLock:
		s = "read lock " + name
	case KindWaitGroup, KindOnce, KindCond:
		// Named after their type ("WaitGroup@0x...") unless named
		// otherwise.
		s = name
		if typ := typeOf[w.Kind].String(); !strings.HasPrefix(name, typ) {
			s = typ + " " + name
		}
	default:
		s = w.Kind + " " + name
	}
	if w.Detail != "" {
		s += " (" + w.Detail + ")"
	}
	return s
}

// typeOf gives the kinds of the primitives whose waits are not on locks.
var typeOf = map[string]kind.Kind{KindWaitGroup: kind.WaitGroup, KindOnce: kind.Once, KindCond: kind.Cond}

// maxChain bounds how many goroutines an explanation follows.
const maxChain = 8

// Explain says in words why w's goroutine is stuck: what it waits for,
// who can release it, and what those goroutines are doing, following
// waits from one goroutine to the next ("waiting for lock b#1, held by
// goroutine 12, which is waiting for lock a#1, held by goroutine 7, which
// closes a cycle of waits"). d, if not nil, tells the state of goroutines
// that are in no syncwatch wait ("blocked in chan receive at ...", "has
// exited").
func (g *Graph) Explain(w *Wait, d *Dump) string {
	var b strings.Builder
	g.explain(&b, w, d, map[int64]bool{w.Goroutine: true}, 0)
	return b.String()
}

func (g *Graph) explain(b *strings.Builder, w *Wait, d *Dump, seen map[int64]bool, depth int) {
	b.WriteString("waiting for " + Describe(w))
	ids := g.Blockers(w)
	if len(ids) == 0 {
		if w.IsLock() && !w.HolderKnown {
			b.WriteString(", holder not tracked in this mode")
		} else if w.IsLock() {
			b.WriteString(", holder unknown")
		}
		return
	}
	if len(ids) > 1 {
		fmt.Fprintf(b, ", which needs %d goroutines", len(ids))
	}
	for i, id := range ids {
		if i == 3 {
			fmt.Fprintf(b, "; and %d more", len(ids)-i)
			break
		}
		sep := ", "
		if i > 0 {
			sep = "; "
		}
		b.WriteString(sep + Relation(w) + fmt.Sprintf(" goroutine %d", id))
		g.follow(b, id, d, seen, depth)
	}
}

// follow writes what goroutine id is doing.
func (g *Graph) follow(b *strings.Builder, id int64, d *Dump, seen map[int64]bool, depth int) {
	next := g.waits[id]
	switch {
	case seen[id]:
		b.WriteString(", which closes a cycle of waits")
	case next != nil && depth+1 >= maxChain:
		b.WriteString(", which is waiting for " + Describe(next) + " (chain truncated)")
	case next != nil:
		seen[id] = true
		b.WriteString(", which is ")
		g.explain(b, next, d, seen, depth+1)
	case d == nil:
		b.WriteString(", which is in no syncwatch wait")
	default:
		b.WriteString(", which " + RoutineState(d, id))
	}
}

// RoutineState says what d shows of goroutine id, known to have existed
// before d was taken, for a goroutine in no syncwatch wait: "has exited",
// "is blocked in chan receive at main.worker (worker.go:42)", "is running
// at ...", "is blocked for good in chan receive at ..." (when the runtime
// found it so: see Dump.leaked).
func RoutineState(d *Dump, id int64) string {
	r, ok := d.Routine(id)
	if !ok {
		return "has exited"
	}
	where := ""
	if len(r.Frames) > 0 {
		where = " at " + r.Frames[0].String()
	}
	switch r.State {
	case "running", "runnable":
		return "is " + r.State + where
	}
	state, rest, _ := strings.Cut(r.State, ", ")
	if state, leaked := leak.Marked(state); leaked {
		if rest != "" {
			state += ", " + rest
		}
		return "is blocked for good in " + state + where
	}
	return "is blocked in " + r.State + where
}

// Relation says how w relates to a goroutine it needs, in a sentence "G
// waits for X <relation> H": "held by", "read-held by", "queued behind",
// "whose function runs in", "which waits for", "which needs".
func Relation(w *Wait) string {
	switch {
	case w.IsLock() && w.Holder() != 0:
		return "held by"
	case w.Kind == KindLock:
		return "read-held by"
	case w.Kind == KindRLock:
		return "queued behind"
	case w.Kind == KindOnce:
		return "whose function runs in"
	case w.Kind == KindWaitGroup:
		return "which waits for"
	}
	return "which needs"
}

// Proof says in words what proved f, or "" for a finding that needs none.
func (f Finding) Proof() string {
	e := f.evidence
	if e == nil {
		return ""
	}
	if f.leaked() {
		return "the runtime's leak detection found them blocked for good: nothing running can reach what they wait on"
	}
	return "every goroutine of the program has been blocked for the grace period, none running, sleeping or in a system call; " +
		"not conclusive: a timer (time.AfterFunc, a timer's channel, a deadline) or input from outside the process, which only the runtime's leak detection sees, may still wake one"
}

// Conclusive reports whether the evidence for f, a Deadlock or a
// HeldByExited, proves its waits blocked for good (rule W1): the runtime's
// leak detection proved them leaked. Every goroutine blocked (evidence 2)
// is not conclusive: a timer or input from outside the process may still
// wake one, and end the waits. The caller acts only on conclusive
// findings, and follows the waits of the others.
func (f Finding) Conclusive() bool { return f.leaked() }

// leaked reports whether the runtime proved every wait of f leaked.
func (f Finding) leaked() bool {
	e := f.evidence
	return e != nil && all(f.Waits, func(w *Wait) bool { return e.leaked(w.Goroutine) })
}
