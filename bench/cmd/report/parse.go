package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// Result is one benchmark result line of go test -bench output.
type Result struct {
	// Name is the full benchmark name without the GOMAXPROCS suffix:
	// "BenchmarkUncontended/impl=sync".
	Name string
	// Bench is the top-level benchmark: "BenchmarkUncontended".
	Bench string
	// Impl is the value of the name's impl= part, "" if it has none.
	Impl string
	// Procs is the GOMAXPROCS the result ran with: the name's -N suffix,
	// or 1 when there is none (go test adds no suffix for 1).
	Procs int
	// Iters is the number of iterations.
	Iters int64
	// Metrics maps each unit ("ns/op", "B/op", "allocs/op", "live-MiB"...)
	// to its value.
	Metrics map[string]float64
}

// Output is one go test run's output, parsed.
type Output struct {
	// Goos, Goarch, Pkg and CPU are the values of the configuration lines
	// go test prints before the first result.
	Goos, Goarch, Pkg, CPU string
	Results                []Result
	// Failed lists the benchmarks and tests reported as "--- FAIL".
	Failed []string
}

// Parse reads go test -bench output (with or without -v). Lines that are
// neither configuration nor results, such as benchmark logs, are skipped.
func Parse(r io.Reader) (*Output, error) {
	out := new(Output)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "Benchmark"):
			if res, ok := parseResult(line); ok {
				out.Results = append(out.Results, res)
			}
		case strings.HasPrefix(line, "--- FAIL: "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "--- FAIL: "), " ")
			out.Failed = append(out.Failed, name)
		default:
			key, val, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			switch key {
			case "goos":
				out.Goos = val
			case "goarch":
				out.Goarch = val
			case "pkg":
				out.Pkg = val
			case "cpu":
				out.CPU = val
			}
		}
	}
	return out, sc.Err()
}

// parseResult parses "BenchmarkName-N  iters  value unit  value unit...".
func parseResult(line string) (Result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 {
		return Result{}, false
	}
	iters, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Result{}, false
	}
	res := Result{Iters: iters, Procs: 1, Metrics: make(map[string]float64, (len(f)-2)/2)}
	res.Name = f[0]
	if i := strings.LastIndexByte(f[0], '-'); i > 0 {
		if p, err := strconv.Atoi(f[0][i+1:]); err == nil && p > 0 {
			res.Name, res.Procs = f[0][:i], p
		}
	}
	parts := strings.Split(res.Name, "/")
	res.Bench = parts[0]
	for _, p := range parts[1:] {
		if v, ok := strings.CutPrefix(p, "impl="); ok {
			res.Impl = v
		}
	}
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, false
		}
		res.Metrics[f[i+1]] = v
	}
	return res, true
}
