package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/bench"
)

// Env describes where and how the benchmarks ran.
type Env struct {
	GoVersion  string
	GOOS       string
	GOARCH     string
	CPU        string
	GOMAXPROCS int
	Date       time.Time
	Count      int
	Benchtime  string
}

// Render returns the report in markdown: the run's environment, the
// targets with their verdicts, every case's medians, the custom metrics of
// the cases that have them, the detection comparison (if det is not nil)
// and the benchmarks that failed.
func Render(d *Data, checks []Check, det []bench.Detection) string {
	var b strings.Builder
	renderHeader(&b, d.Env)
	renderTargets(&b, checks)
	renderResults(&b, d)
	renderMetrics(&b, d)
	if det != nil {
		renderDetection(&b, det)
	}
	renderPrimitives(&b, d.Primitives)
	if len(d.Failed) > 0 {
		b.WriteString("\n## Failed\n\ngo test reported these as failed; their numbers, if any, are suspect:\n\n")
		for _, f := range d.Failed {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return b.String()
}

func renderHeader(b *strings.Builder, e Env) {
	b.WriteString("# syncwatch lock benchmarks\n\n")
	fmt.Fprintf(b, "- Go: %s %s/%s\n", e.GoVersion, e.GOOS, e.GOARCH)
	fmt.Fprintf(b, "- CPU: %s\n", e.CPU)
	fmt.Fprintf(b, "- GOMAXPROCS: %d\n", e.GOMAXPROCS)
	fmt.Fprintf(b, "- Date: %s\n", e.Date.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(b, "- Medians of %d rounds, each running every case once and every implementation of a case back to back; -benchtime %s, except (f) also at -cpu 1,2 and (i) to (o) at one op per run (-benchtime 1x)\n", e.Count, e.Benchtime)
}

func renderTargets(b *strings.Builder, checks []Check) {
	n := Tally(checks)
	fmt.Fprintf(b, "\n## Targets: %d PASS, %d FAIL, %d n/a\n\n", n[Pass], n[Fail], n[NoData])
	rows := make([][]string, 0, len(checks))
	for _, c := range checks {
		verdict := c.Verdict.String()
		if c.Verdict == Fail {
			verdict = "**FAIL**"
		}
		rows = append(rows, []string{c.Case, c.Target, c.Measured, verdict})
	}
	table(b, []string{"case", "target", "measured", "result"}, rows)
}

func renderResults(b *strings.Builder, d *Data) {
	b.WriteString("\n## Results (medians)\n\n")
	b.WriteString("× sync: ns/op over sync's in the same go test run. " +
		"go-deadlock ÷: go-deadlock's ns/op over this row's. " +
		"The syncwatch_off rows come from the run built with -tags syncwatch_off, which has its own sync baseline.\n\n")
	var rows [][]string
	for _, c := range cases {
		for _, p := range d.Procs(false, c.Bench) {
			label := c.Label()
			if c.Kind == scaling {
				label += fmt.Sprintf(", -cpu %d", p)
			}
			for _, impl := range d.Impls(false, c.Bench) {
				rows = append(rows, resultRow(d, label, c, p, impl, false))
				if impl != implSync {
					continue
				}
				for _, timpl := range d.Impls(true, c.Bench) {
					if _, ok := d.Get(true, c.Bench, timpl, p); ok {
						rows = append(rows, resultRow(d, label, c, p, timpl, true))
					}
				}
			}
		}
	}
	table(b, []string{"case", "impl", "ns/op", "B/op", "allocs/op", "× sync", "go-deadlock ÷"}, rows, 2, 3, 4, 5, 6)
}

func resultRow(d *Data, label string, c Case, p int, impl string, isTagged bool) []string {
	s, _ := d.Get(isTagged, c.Bench, impl, p)
	cell := func(unit string, f func(float64) string) string {
		if v, ok := s[unit]; ok {
			return f(v)
		}
		return "—"
	}
	vsSync, vsThis := "—", "—"
	if base, ok := d.Value(isTagged, c.Bench, implSync, p, "ns/op"); ok && base > 0 {
		if v, ok := s["ns/op"]; ok {
			vsSync = formatRatio(v / base)
		}
	}
	if !isTagged && impl != implSync && impl != implDeadlock {
		if dl, ok := d.Value(false, c.Bench, implDeadlock, p, "ns/op"); ok {
			if v, ok := s["ns/op"]; ok && v > 0 {
				vsThis = formatRatio(dl / v)
			}
		}
	}
	title := implTitle(impl)
	if isTagged && impl == implSync {
		title = "sync, syncwatch_off run"
	}
	return []string{label, title, cell("ns/op", formatNs), cell("B/op", formatCount),
		cell("allocs/op", formatCount), vsSync, vsThis}
}

func renderMetrics(b *strings.Builder, d *Data) {
	for _, c := range cases {
		units := d.Units(false, c.Bench)
		if len(units) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n## %s: metrics (medians)\n\n", c.Label())
		var rows [][]string
		right := make([]int, len(units))
		for _, impl := range d.Impls(false, c.Bench) {
			s, _ := d.Get(false, c.Bench, impl, 0)
			row := []string{implTitle(impl)}
			for i, u := range units {
				right[i] = i + 1
				if v, ok := s[u]; ok {
					row = append(row, formatMetric(v))
				} else {
					row = append(row, "—")
				}
			}
			rows = append(rows, row)
		}
		table(b, append([]string{"impl"}, units...), rows, right...)
	}
}

func renderDetection(b *strings.Builder, det []bench.Detection) {
	b.WriteString("\n## Detection\n\n")
	b.WriteString("Each scenario runs its goroutines one after another, so nothing hangs: " +
		"a detector must find the bug from the lock order alone. lockorder runs in check mode.\n\n")
	var rows [][]string
	var okLO, okDL int
	for _, d := range det {
		should := "report"
		if !d.Bug {
			should = "stay silent"
		}
		if d.Correct(d.Lockorder) {
			okLO++
		}
		if d.Correct(d.Deadlock) {
			okDL++
		}
		rows = append(rows, []string{d.Scenario, should, outcome(d, d.Lockorder), outcome(d, d.Deadlock)})
	}
	rows = append(rows, []string{"**correct**", "", fmt.Sprintf("**%d/%d**", okLO, len(det)), fmt.Sprintf("**%d/%d**", okDL, len(det))})
	table(b, []string{"scenario", "should", "lockorder", "go-deadlock"}, rows)
}

// outcome describes what a detector did with a scenario.
func outcome(d bench.Detection, reported bool) string {
	switch {
	case reported && d.Bug:
		return "reported"
	case reported:
		return "**false report**"
	case d.Bug:
		return "**missed**"
	}
	return "silent"
}
