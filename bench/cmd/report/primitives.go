package main

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// primitivePkgs hold the coordination primitives' own benchmarks: barrier
// round trips next to other barriers, paramserver Apply throughput with 1,
// 8 and 64 workers and Get latency, staleness checks and clocks. The report
// runs them once each and lists their medians as they are; they have no
// targets.
var primitivePkgs = []string{
	"github.com/syncwatch/syncwatch/barrier",
	"github.com/syncwatch/syncwatch/paramserver",
	"github.com/syncwatch/syncwatch/staleness",
}

// PrimitivesPlan returns one go test command per primitive package that
// the filter selects (by the package's last path element); with no
// filter, every package.
func PrimitivesPlan(o Options) []Invocation {
	var plan []Invocation
	for _, pkg := range primitivePkgs {
		if o.Filter != nil && !o.Filter.MatchString(path.Base(pkg)) {
			continue
		}
		plan = append(plan, Invocation{Args: []string{"test", "-run", "^$", "-bench", ".", "-benchmem",
			"-count", strconv.Itoa(o.Count), "-benchtime", o.Benchtime, "-timeout", "0", pkg}})
	}
	return plan
}

// renderPrimitives writes each primitive package's benchmarks: median
// ns/op, B/op and allocs/op, in the order go test ran them.
func renderPrimitives(b *strings.Builder, outs []*Output) {
	if len(outs) == 0 {
		return
	}
	b.WriteString("\n## Coordination primitives (medians)\n\n")
	var rows [][]string
	for _, out := range outs {
		var names []string
		values := map[string]map[string][]float64{}
		for _, r := range out.Results {
			name := r.Name
			if r.Procs != 1 {
				name += "-" + strconv.Itoa(r.Procs)
			}
			if values[name] == nil {
				values[name] = map[string][]float64{}
				names = append(names, name)
			}
			for unit, v := range r.Metrics {
				values[name][unit] = append(values[name][unit], v)
			}
		}
		for _, name := range names {
			cell := func(unit string, f func(float64) string) string {
				vs := slices.Clone(values[name][unit])
				if len(vs) == 0 {
					return "—"
				}
				return f(median(vs))
			}
			rows = append(rows, []string{path.Base(out.Pkg), strings.TrimPrefix(name, "Benchmark"),
				cell("ns/op", formatNs), cell("B/op", formatCount), cell("allocs/op", formatCount)})
		}
	}
	table(b, []string{"package", "benchmark", "ns/op", "B/op", "allocs/op"}, rows, 2, 3, 4)
	fmt.Fprintf(b, "\nRun by hand: `go test -run '^$' -bench . -benchmem ./barrier ./paramserver ./staleness`.\n")
}
