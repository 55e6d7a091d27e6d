package main

import (
	"fmt"
	"strings"
)

// Verdict is a target's outcome.
type Verdict int

const (
	// NoData: the run did not measure what the target needs.
	NoData Verdict = iota
	// Pass: the target is met.
	Pass
	// Fail: the target is missed.
	Fail
)

// String returns "PASS", "FAIL" or "n/a".
func (v Verdict) String() string {
	switch v {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	}
	return "n/a"
}

// Check is one target, evaluated.
type Check struct {
	// Case is the case's label, "(a) uncontended Lock/Unlock".
	Case string
	// Target says what must hold, "check ≤ 4x sync, 0 allocs".
	Target string
	// Measured says what the run measured.
	Measured string
	Verdict  Verdict
}

// target is one of the targets.
type target struct {
	caseID string
	what   string
	eval   func(d *Data, c Case) (measured string, ok bool)
}

// targets are the targets, every ratio taken within one run.
var targets = []target{
	{"a", "check ≤ 4x sync, 0 allocs", vsSync(implCheck, 4, true)},
	{"a", "trace ≤ 1.3x sync", vsSync(implTrace, 1.3, false)},
	{"a", "off-tag: same code as sync", sameCodeAsSync},
	{"a", "go-deadlock ≥ 30x check", deadlockSlower(30)},
	{"b", "check ≤ 5x sync, 0 allocs", vsSync(implCheck, 5, true)},
	{"b", "trace ≤ 1.3x sync", vsSync(implTrace, 1.3, false)},
	{"b", "go-deadlock ≥ 30x check", deadlockSlower(30)},
	{"d", "check ≤ 4x sync", vsSync(implCheck, 4, false)},
	{"d", "trace ≤ 1.3x sync", vsSync(implTrace, 1.3, false)},
	{"d", "go-deadlock ≥ 30x check", deadlockSlower(30)},
	{"e", "check ≤ 2x sync", vsSync(implCheck, 2, false)},
	{"e", "trace ≤ 1.2x sync", vsSync(implTrace, 1.2, false)},
	{"f", "check ≤ 4x sync, at every -cpu", vsSync(implCheck, 4, false)},
	{"f", "check at -cpu 2 ≤ 0.7x its ns/op at -cpu 1", scales(implCheck, 0.7)},
	{"f", "go-deadlock ≥ 30x check, at every -cpu", deadlockSlower(30)},
	{"g", "check ≤ 1.2x check of (a)", vsCase(implCheck, "a", 1.2)},
	{"h", "check ≤ 1.5x check of (a)", vsCase(implCheck, "a", 1.5)},
	{"i", "check: live heap growth ≤ 16 MiB", metricAtMost(implCheck, "live-MiB", 16, " MiB")},
	{"j", "new non-closing edge ≤ 5 µs amortized", metricAtMost(implCheck, "ns/edge", 5000, " ns")},
	{"j", "closing edge reported in ≤ 1 ms", reportedWithin(1000)},
	{"j", "the report holds the whole cycle", wholeCycle},
	{"k", "first acquisition with 7 objects' stripes in the graph ≤ 2x with none", metricAtMost(implCheck, "full/empty", 2, "x")},
	{"l", "check ≤ 2x sync", vsSync(implCheck, 2, false)},
	{"l", "check: no pause over 10 ms", metricAtMost(implCheck, "pause-ms", 10, " ms")},
	{"l", "check: live heap once they are gone ≤ 1.1x sync's", metricVsSync(implCheck, "heap-MiB", 1.1)},
	{"m", "check ≤ 3x sync", vsSync(implCheck, 3, false)},
	{"m", "check: constant cost per call (last tenth ≤ 1.5x first)", metricAtMost(implCheck, "growth", 1.5, "x")},
	{"n", "check: a new lock under a held one ≤ 1 µs", metricAtMost(implCheck, "ns/node", 1000, " ns")},
	{"o", "check: a new group waited under a hold ≤ 1.2 µs", metricAtMost(implCheck, "ns/group", 1200, " ns")},
}

// Evaluate checks every target against d.
func Evaluate(d *Data) []Check {
	out := make([]Check, 0, len(targets))
	for _, t := range targets {
		c := caseByID(t.caseID)
		ch := Check{Case: c.Label(), Target: t.what, Measured: "not measured"}
		if m, ok := t.eval(d, c); m != "" {
			ch.Measured, ch.Verdict = m, Fail
			if ok {
				ch.Verdict = Pass
			}
		}
		out = append(out, ch)
	}
	return out
}

// Tally counts the checks by verdict.
func Tally(checks []Check) map[Verdict]int {
	n := map[Verdict]int{}
	for _, c := range checks {
		n[c.Verdict]++
	}
	return n
}

// procsOf returns the GOMAXPROCS values a case is judged at: every one
// measured for the scaling case, the highest for the others.
func procsOf(d *Data, c Case) []int {
	ps := d.Procs(false, c.Bench)
	if c.Kind != scaling && len(ps) > 1 {
		ps = ps[len(ps)-1:]
	}
	return ps
}

// atProcs evaluates one measurement at each of procs and joins them. It
// returns "" if one is missing.
func atProcs(procs []int, one func(p int) (string, bool)) (string, bool) {
	if len(procs) == 0 {
		return "", false
	}
	var parts []string
	all := true
	for _, p := range procs {
		m, ok := one(p)
		if m == "" {
			return "", false
		}
		if len(procs) > 1 {
			m += fmt.Sprintf(" (-cpu %d)", p)
		}
		parts = append(parts, m)
		all = all && ok
	}
	return strings.Join(parts, ", "), all
}

// ratio returns ns/op of impl over ns/op of base, same build and procs.
func ratio(d *Data, c Case, impl, base string, p int) (float64, bool) {
	n, ok1 := d.Value(false, c.Bench, impl, p, "ns/op")
	m, ok2 := d.Value(false, c.Bench, base, p, "ns/op")
	if !ok1 || !ok2 || m == 0 {
		return 0, false
	}
	return n / m, true
}

// vsSync: impl's ns/op is at most max times sync's, with no allocation if
// zeroAllocs.
func vsSync(impl string, max float64, zeroAllocs bool) func(*Data, Case) (string, bool) {
	return func(d *Data, c Case) (string, bool) {
		return atProcs(procsOf(d, c), func(p int) (string, bool) {
			r, ok := ratio(d, c, impl, implSync, p)
			if !ok {
				return "", false
			}
			if !zeroAllocs {
				return formatRatio(r), r <= max
			}
			allocs, ok := d.Value(false, c.Bench, impl, p, "allocs/op")
			if !ok {
				return "", false
			}
			return formatRatio(r) + ", " + formatCount(allocs) + " allocs", r <= max && allocs == 0
		})
	}
}

// deadlockSlower: go-deadlock's ns/op is at least min times check's.
func deadlockSlower(min float64) func(*Data, Case) (string, bool) {
	return func(d *Data, c Case) (string, bool) {
		return atProcs(procsOf(d, c), func(p int) (string, bool) {
			r, ok := ratio(d, c, implDeadlock, implCheck, p)
			if !ok {
				return "", false
			}
			return formatRatio(r), r >= min
		})
	}
}

// vsCase: impl's ns/op in c is at most max times its ns/op in case id.
func vsCase(impl, id string, max float64) func(*Data, Case) (string, bool) {
	return func(d *Data, c Case) (string, bool) {
		n, ok1 := d.Value(false, c.Bench, impl, 0, "ns/op")
		m, ok2 := d.Value(false, caseByID(id).Bench, impl, 0, "ns/op")
		if !ok1 || !ok2 || m == 0 {
			return "", false
		}
		r := n / m
		return fmt.Sprintf("%s (%s vs %s ns)", formatRatio(r), formatNs(n), formatNs(m)), r <= max
	}
}

// scales: impl's ns/op at the highest -cpu is at most max times its ns/op
// at the lowest.
func scales(impl string, max float64) func(*Data, Case) (string, bool) {
	return func(d *Data, c Case) (string, bool) {
		ps := d.Procs(false, c.Bench)
		if len(ps) < 2 {
			return "", false
		}
		lo, hi := ps[0], ps[len(ps)-1]
		n1, ok1 := d.Value(false, c.Bench, impl, lo, "ns/op")
		n2, ok2 := d.Value(false, c.Bench, impl, hi, "ns/op")
		if !ok1 || !ok2 || n1 == 0 {
			return "", false
		}
		r := n2 / n1
		m := fmt.Sprintf("%s (%s ns at -cpu %d, %s ns at -cpu %d)", formatRatio(r), formatNs(n2), hi, formatNs(n1), lo)
		// sync's own scaling says how many cores the run really had.
		s1, ok1 := d.Value(false, c.Bench, implSync, lo, "ns/op")
		s2, ok2 := d.Value(false, c.Bench, implSync, hi, "ns/op")
		if ok1 && ok2 && s1 > 0 {
			m += "; sync: " + formatRatio(s2/s1)
		}
		return m, r <= max
	}
}

// metricAtMost: impl's median of unit is at most max. The measurement is
// shown followed by suffix.
func metricAtMost(impl, unit string, max float64, suffix string) func(*Data, Case) (string, bool) {
	return func(d *Data, c Case) (string, bool) {
		v, ok := d.Value(false, c.Bench, impl, 0, unit)
		if !ok {
			return "", false
		}
		return formatMetric(v) + suffix, v <= max
	}
}

// metricVsSync: impl's median of unit is at most max times sync's, in the
// same run.
func metricVsSync(impl, unit string, max float64) func(*Data, Case) (string, bool) {
	return func(d *Data, c Case) (string, bool) {
		v, ok1 := d.Value(false, c.Bench, impl, 0, unit)
		s, ok2 := d.Value(false, c.Bench, implSync, 0, unit)
		if !ok1 || !ok2 || s == 0 {
			return "", false
		}
		r := v / s
		return fmt.Sprintf("%s (%s vs %s %s)", formatRatio(r), formatMetric(v), formatMetric(s), unit), r <= max
	}
}

// reportedWithin: the closing edge's cycle was reported, complete, at most
// maxUs microseconds after the closing Lock call.
func reportedWithin(maxUs float64) func(*Data, Case) (string, bool) {
	return func(d *Data, c Case) (string, bool) {
		ok, have := d.Value(false, c.Bench, implCheck, 0, "cycle-ok")
		if !have {
			return "", false
		}
		us, timed := d.Value(false, c.Bench, implCheck, 0, "detect-us")
		switch {
		case !timed:
			return "never reported", false
		case ok < 1:
			return formatMetric(us) + " µs, but not every report held the whole cycle", false
		}
		return formatMetric(us) + " µs", us <= maxUs
	}
}

// wholeCycle: every graph-scale run found the complete cycle.
func wholeCycle(d *Data, c Case) (string, bool) {
	ok, have := d.Value(false, c.Bench, implCheck, 0, "cycle-ok")
	n, haveLen := d.Value(false, c.Bench, implCheck, 0, "cycle-len")
	if !have || !haveLen {
		return "", false
	}
	if ok < 1 {
		return fmt.Sprintf("incomplete or missing (expected %s edges)", formatCount(n)), false
	}
	return fmt.Sprintf("complete, %s edges", formatCount(n)), true
}

// sameCodeAsSync: with -tags syncwatch_off the compiler makes the same
// decisions for lockorder as for sync, and Lock/Unlock allocate nothing.
func sameCodeAsSync(d *Data, c Case) (string, bool) {
	allocs, ok := d.Value(true, c.Bench, implOffTag, 0, "allocs/op")
	if !ok || d.SameCode == nil {
		return "", false
	}
	var parts []string
	same := d.SameCode.Same()
	if same {
		parts = append(parts, fmt.Sprintf("compiler: %d lockorder calls inlined, inlining and escapes as for sync", d.SameCode.Inlined))
	} else {
		parts = append(parts, fmt.Sprintf("compiler: %d lockorder calls inlined, %d decisions differ from sync",
			d.SameCode.Inlined, len(d.SameCode.OnlySync)+len(d.SameCode.OnlyLockorder)))
	}
	n, ok1 := d.Value(true, c.Bench, implOffTag, 0, "ns/op")
	m, ok2 := d.Value(true, c.Bench, implSync, 0, "ns/op")
	if ok1 && ok2 && m > 0 {
		parts = append(parts, formatRatio(n/m)+" sync")
	}
	parts = append(parts, formatCount(allocs)+" allocs")
	return strings.Join(parts, "; "), same && allocs == 0
}
