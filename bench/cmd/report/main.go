// Command report runs syncwatch's benchmark suite (package bench) and
// prints the results as markdown: medians for every case and
// implementation, their ratios to sync and go-deadlock, a PASS/FAIL verdict
// for each of the suite's targets, and which lock-order bugs lockorder and
// go-deadlock detect.
//
// Usage, from the module root:
//
//	go run ./bench/cmd/report [-count 5] [-benchtime 1s] [-run REGEXP] [-o FILE] [-q]
//
// It runs go test on the bench package several times: in each of -count
// rounds, the micro cases once normally and once with -tags syncwatch_off
// and the per-goroutine case once with -cpu 1,2 (so that a slow spell of
// the machine falls on every implementation of a round alike); then the
// one-shot cases (churn, graph, live goroutines, WaitGroup.Go) at one op per run, -count runs. It then
// compiles the workloads with -tags syncwatch_off and -m to compare the
// compiler's decisions for lockorder and sync, and runs the detection
// scenarios in-process. Last it runs the benchmarks of barrier,
// paramserver and staleness and lists them. Every number comes from this
// run; at the defaults
// it takes about 8 minutes on 2 cores.
//
// Flags:
//
//	-count N      results per median: rounds of the timed cases, runs of the one-shot ones (default 5)
//	-benchtime T  go test -benchtime for all but the one-shot cases (default 1s)
//	-run REGEXP   only the cases whose benchmark name matches
//	-o FILE       write the report to FILE instead of standard output
//	-q            do not copy go test's output to standard error
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"time"

	"github.com/syncwatch/syncwatch/bench"
)

func main() {
	count := flag.Int("count", 5, "results per median: rounds of the timed cases, runs of the one-shot ones")
	benchtime := flag.String("benchtime", "1s", "go test -benchtime for all but the one-shot cases")
	run := flag.String("run", "", "only the cases whose benchmark name matches this regexp")
	outFile := flag.String("o", "", "write the report to this file instead of standard output")
	quiet := flag.Bool("q", false, "do not copy go test's output to standard error")
	flag.Parse()
	if *count < 1 {
		fatalf("-count must be at least 1")
	}
	opts := Options{Count: *count, Benchtime: *benchtime}
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			fatalf("-run: %v", err)
		}
		opts.Filter = re
	}
	var progress io.Writer = os.Stderr
	if *quiet {
		progress = io.Discard
	}

	env := Env{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Date:       time.Now(),
		Count:      *count,
		Benchtime:  *benchtime,
	}
	plan := Plan(opts)
	if len(plan) == 0 && len(PrimitivesPlan(opts)) == 0 {
		fatalf("-run %q selects no case", *run)
	}
	var runs []Run
	failed := false
	for _, inv := range plan {
		fmt.Fprintf(progress, "\n$ %s\n", inv)
		out, err := Execute(inv, progress)
		if err != nil {
			if out == nil || len(out.Results) == 0 {
				fatalf("%v", err)
			}
			fmt.Fprintf(os.Stderr, "report: %v\n", err)
			failed = true
		}
		if env.CPU == "" {
			env.CPU = out.CPU
		}
		runs = append(runs, Run{Tagged: inv.Tagged, Out: out})
	}
	d := Collect(env, runs)
	for _, inv := range PrimitivesPlan(opts) {
		fmt.Fprintf(progress, "\n$ %s\n", inv)
		out, err := Execute(inv, progress)
		if err != nil {
			fmt.Fprintf(os.Stderr, "report: %v\n", err)
			failed = true
		}
		if out != nil {
			d.Primitives = append(d.Primitives, out)
			d.Failed = append(d.Failed, out.Failed...)
		}
	}
	if sc, err := CheckSameCode(); err != nil {
		fmt.Fprintf(os.Stderr, "report: same-code check: %v\n", err)
	} else {
		d.SameCode = sc
	}

	report := Render(d, Evaluate(d), bench.Detect())
	if *outFile != "" {
		if err := os.WriteFile(*outFile, []byte(report), 0o644); err != nil {
			fatalf("%v", err)
		}
	} else {
		fmt.Print(report)
	}
	if failed {
		os.Exit(1)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "report: "+format+"\n", args...)
	os.Exit(2)
}
