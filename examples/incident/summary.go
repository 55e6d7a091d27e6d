package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/paramserver"
)

// Catch is one row of the summary: an incident symptom and, for the
// incident run, what caught it and when; for the fixed run, whether the
// corrected design was clean of it.
type Catch struct {
	Symptom string
	// By is the syncwatch primitive that caught it (or, fixed, the fix).
	By string
	// Kind is the violation kind received; "" if none was.
	Kind lockorder.Kind
	// At is the time since the start when it was caught.
	At time.Duration
	// OK is set when it was caught (or, fixed, when the run was clean).
	OK     bool
	Detail string
}

// The symptoms, as the incident report lists them.
const (
	symptomABBA      = "ABBA deadlock"
	symptomRace      = "parameter-server race / torn versions"
	symptomStaleness = "staleness check that only logged"
	symptomBarrier   = "barrier 31/32 forever"
)

// first returns the first violation of kind that satisfies ok.
func (s *sim) first(kind lockorder.Kind, ok func(lockorder.Violation) bool) (seen, bool) {
	for _, sv := range s.violations {
		if sv.v.Kind == kind && (ok == nil || ok(sv.v)) {
			return sv, true
		}
	}
	return seen{}, false
}

func involves(classes ...string) func(lockorder.Violation) bool {
	return func(v lockorder.Violation) bool {
		for _, c := range classes {
			if !slices.ContainsFunc(v.Locks, func(l lockorder.LockRef) bool { return l.Class == c }) {
				return false
			}
		}
		return true
	}
}

// staleVerdict says whether every late gradient was treated as an
// inclusive bound requires, and lists the figures.
func staleVerdict(events []StaleEvent) (rejected, accepted []string, correct bool) {
	correct = len(events) > 0
	for _, e := range events {
		fig := fmt.Sprintf("%d (worker %d)", e.Staleness, e.Worker)
		if e.Accepted {
			accepted = append(accepted, fig)
		} else {
			rejected = append(rejected, fig)
		}
		correct = correct && e.Accepted == (e.Staleness <= e.Max)
	}
	return rejected, accepted, correct && len(rejected) > 0
}

// catches fills the summary from what the run observed. Called with s.mu
// held.
func (s *sim) catches(res Result) []Catch {
	if s.cfg.Fixed {
		return s.fixedChecks(res)
	}
	since := func(t time.Time) time.Duration { return t.Sub(s.start) }
	var out []Catch

	c := Catch{Symptom: symptomABBA, By: "lockorder.Mutex, check mode"}
	if sv, ok := s.first(lockorder.KindCycle, involves("worker_lock", "aggregation_lock")); ok {
		c.OK, c.Kind, c.At = true, sv.v.Kind, since(sv.at)
		closing := slices.MaxFunc(sv.v.Cycle, func(a, b lockorder.Edge) int { return a.Time.Compare(b.Time) })
		c.Detail = fmt.Sprintf("closed by %s taking %s in %s", s.who(closing.Goroutine), closing.To, shortFunc(closing.Stack))
		if sv.blocked == 0 {
			c.Detail += ",\nwith no goroutine blocked on a lock"
		}
		if s.broken != nil {
			c.Detail += fmt.Sprintf("; the deadlock it predicts came at %s", ms(since(s.brokenAt)))
		}
		if lh, ok := s.first(barrier.KindLockHeld, nil); ok {
			c.Detail += fmt.Sprintf("\nalso %s at %s: %s", lh.v.Kind, ms(since(lh.at)), lh.v.Message)
		}
	}
	out = append(out, c)

	c = Catch{Symptom: symptomRace, By: "lockorder.Mutex.AssertHeld"}
	if sv, ok := s.first(lockorder.KindNotHeld, involves("ps_lock")); ok {
		c.OK, c.Kind, c.At = true, sv.v.Kind, since(sv.at)
		var where []string
		for _, sv := range s.violations {
			if sv.v.Kind == lockorder.KindNotHeld && len(sv.v.Stack) > 0 {
				if fn := shortFunc(sv.v.Stack); !slices.Contains(where, fn) {
					where = append(where, fn)
				}
			}
		}
		c.Detail = fmt.Sprintf("%s not held in %s, the first time each ran", sv.v.Locks[0].Name, strings.Join(where, " and "))
	}
	out = append(out, c)

	c = Catch{Symptom: symptomStaleness, By: fmt.Sprintf("staleness.Policy, bound %d", s.maxStaleness)}
	rejected, accepted, correct := staleVerdict(s.stale)
	if correct {
		c.OK = true
		for _, e := range s.stale {
			if !e.Accepted {
				c.At = e.Elapsed
				break
			}
		}
		if sv, ok := s.first(paramserver.KindStaleRejected, nil); ok {
			c.Kind = sv.v.Kind
		}
		c.Detail = "rejected staleness " + strings.Join(rejected, ", ")
		if len(accepted) > 0 {
			c.Detail += "; accepted " + strings.Join(accepted, ", ")
		}
	}
	out = append(out, c)

	c = Catch{Symptom: symptomBarrier, By: fmt.Sprintf("barrier.Barrier, timeout %v", s.cfg.BarrierTimeout)}
	if be := s.broken; be != nil && len(be.Why) > 0 && be.Why[0].Holder != 0 {
		c.OK, c.At = true, since(s.brokenAt)
		if sv, ok := s.first(barrier.KindBroken, nil); ok {
			c.Kind, c.At = sv.v.Kind, since(sv.at)
		}
		c.Detail = be.Why[0].String()
		gen := fmt.Sprintf(" generation %d:", be.Generation)
		if sv, ok := s.first(barrier.KindSlow, func(v lockorder.Violation) bool { return strings.Contains(v.Message, gen) }); ok {
			c.Detail += fmt.Sprintf("\nwarned first at %s: %s", ms(since(sv.at)), sv.v.Message)
		}
		if !s.recovered {
			c.Detail += "\nbut the ranks did not all recover"
			c.OK = false
		}
	}
	out = append(out, c)
	return out
}

// fixedChecks says, for each symptom, whether the corrected design was
// clean of it.
func (s *sim) fixedChecks(res Result) []Catch {
	count := func(kinds ...lockorder.Kind) (n int) {
		for _, k := range kinds {
			n += res.Violations[k]
		}
		return n
	}
	var out []Catch

	n := count(lockorder.KindCycle, barrier.KindLockHeld)
	out = append(out, Catch{Symptom: symptomABBA, By: "one lock order, no lock held at the barrier", OK: n == 0,
		Detail: fmt.Sprintf("%d lock-order-cycle, %d lock-held-at-barrier", res.Violations[lockorder.KindCycle], res.Violations[barrier.KindLockHeld])})

	c := Catch{Symptom: symptomRace, By: "paramserver.Server (snapshots, one version counter)"}
	n = count(lockorder.KindNotHeld, paramserver.KindVersionRegression)
	c.OK = n == 0 && res.VersionsChecked && res.VersionsContiguous
	if res.VersionsContiguous {
		c.Detail = fmt.Sprintf("Watch from version 0 received every version, 0 to %d, in order with no gap", res.FinalVersion)
	} else {
		c.Detail = fmt.Sprintf("Watch from version 0 did NOT receive every version, 0 to %d, in order", res.FinalVersion)
	}
	c.Detail += fmt.Sprintf("; %d not-held, %d version-regression",
		res.Violations[lockorder.KindNotHeld], res.Violations[paramserver.KindVersionRegression])
	out = append(out, c)

	rejected, accepted, correct := staleVerdict(s.stale)
	st := s.server.Stats().Total()
	out = append(out, Catch{Symptom: symptomStaleness, By: fmt.Sprintf("paramserver.WithMaxStaleness(%d)", s.maxStaleness), OK: correct,
		Detail: fmt.Sprintf("rejected %s, accepted %s; Stats: %d accepted, %d too stale",
			strings.Join(rejected, ", "), strings.Join(accepted, ", "), st.Accepted, st.TooStale)})

	c = Catch{Symptom: symptomBarrier, By: "nothing held at the barrier", OK: s.broken == nil && count(barrier.KindBroken) == 0}
	allreduce := uint64(2 * s.sched.steps) // phase 2's all-reduce generation
	for _, r := range s.barrier.History() {
		if r.Generation == allreduce {
			c.Detail = fmt.Sprintf("phase 2 all-reduce (generation %d) completed; last: rank %d, %s after the first",
				r.Generation, r.Straggler, ms(r.Lag))
			c.OK = c.OK && !r.Broken
		}
	}
	if c.Detail == "" {
		c.OK, c.Detail = false, "phase 2 all-reduce did not complete"
	}
	out = append(out, c)
	return out
}

// printSummary prints the table and returns an error unless every symptom
// was caught (or, fixed, the run was clean and converged).
func (s *sim) printSummary(res Result) error {
	var b strings.Builder
	var failed []string
	if s.cfg.Fixed {
		b.WriteString("\nsummary: the corrected design against each symptom of the incident\n")
		fmt.Fprintf(&b, "  %-38s %-52s %s\n", "symptom", "design", "result")
		for _, c := range res.Catches {
			verdict := "clean"
			if !c.OK {
				verdict = "FAILED"
				failed = append(failed, c.Symptom)
			}
			fmt.Fprintf(&b, "  %-38s %-52s %s\n", c.Symptom, c.By, verdict)
			writeDetail(&b, c.Detail)
		}
		fmt.Fprintf(&b, "violations that count (not expected): %d", res.Unexpected)
		if n := len(s.violations) - res.Unexpected; n > 0 {
			fmt.Fprintf(&b, "; expected: %d (stale gradients rejected, the server doing its job)", n)
		}
		b.WriteString("\n")
		if res.Unexpected > 0 {
			failed = append(failed, "violations")
		}
		converged := res.FinalLoss < lossTarget
		fmt.Fprintf(&b, "final loss %.5f over all the data at version %d (target < %v): %s\n",
			res.FinalLoss, res.FinalVersion, lossTarget, map[bool]string{true: "converged", false: "DID NOT CONVERGE"}[converged])
		if !converged {
			failed = append(failed, "convergence")
		}
	} else {
		b.WriteString("\nsummary: what caught each symptom of the incident\n")
		fmt.Fprintf(&b, "  %-38s %-32s %-24s %8s\n", "symptom", "caught by", "violation kind", "at")
		for _, c := range res.Catches {
			kind, at := string(c.Kind), ms(c.At)
			if kind == "" {
				kind = "-"
			}
			if !c.OK {
				kind, at = "NOT CAUGHT", "-"
				failed = append(failed, c.Symptom)
			}
			fmt.Fprintf(&b, "  %-38s %-32s %-24s %8s\n", c.Symptom, c.By, kind, at)
			writeDetail(&b, c.Detail)
		}
		fmt.Fprintf(&b, "final loss %.5f at version %d, after %d steps\n", res.FinalLoss, res.FinalVersion, len(res.Losses))
	}
	fmt.Fprintf(&b, "elapsed %s\n", ms(res.Elapsed))
	s.log.printf("%s", b.String())
	if len(failed) > 0 {
		return fmt.Errorf("incident: not as expected: %s", strings.Join(failed, ", "))
	}
	return nil
}

func writeDetail(b *strings.Builder, detail string) {
	for line := range strings.Lines(detail) {
		fmt.Fprintf(b, "      %s", strings.TrimSuffix(line, "\n")+"\n")
	}
}

// shortFunc is the name of the innermost function of st, without its
// package and receiver.
func shortFunc(st lockorder.Stack) string {
	if len(st) == 0 {
		return "?"
	}
	fn := st[0].Function
	return fn[strings.LastIndex(fn, ".")+1:]
}
