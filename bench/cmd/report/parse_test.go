package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseFile parses a captured go test output from testdata.
func parseFile(t *testing.T, name string) *Output {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	out, err := Parse(f)
	require.NoError(t, err)
	return out
}

func TestParseMicro(t *testing.T) {
	out := parseFile(t, "micro.txt")
	assert.Equal(t, "linux", out.Goos)
	assert.Equal(t, "amd64", out.Goarch)
	assert.Equal(t, "github.com/syncwatch/syncwatch/bench", out.Pkg)
	assert.Equal(t, "Intel(R) Xeon(R) Processor", out.CPU)
	require.Len(t, out.Results, 70) // 7 cases x 5 impls x -count 2
	assert.Empty(t, out.Failed)

	r := out.Results[0]
	assert.Equal(t, "BenchmarkUncontended/impl=sync", r.Name)
	assert.Equal(t, "BenchmarkUncontended", r.Bench)
	assert.Equal(t, "sync", r.Impl)
	assert.Equal(t, 2, r.Procs)
	assert.Equal(t, int64(1282142), r.Iters)
	assert.Equal(t, map[string]float64{"ns/op": 18.66, "B/op": 0, "allocs/op": 0}, r.Metrics)

	last := out.Results[len(out.Results)-1]
	assert.Equal(t, "BenchmarkDeepStack", last.Bench)
	assert.Equal(t, "deadlock", last.Impl)
	assert.Equal(t, 5362.0, last.Metrics["ns/op"])
	assert.Equal(t, 24.0, last.Metrics["B/op"])
}

func TestParseScalingProcs(t *testing.T) {
	out := parseFile(t, "scaling.txt")
	procs := map[int]int{}
	for _, r := range out.Results {
		assert.Equal(t, "BenchmarkPerGoroutine", r.Bench)
		procs[r.Procs]++
	}
	assert.Equal(t, map[int]int{1: 10, 2: 10}, procs)
}

func TestParseCustomMetrics(t *testing.T) {
	out := parseFile(t, "oneshot.txt")
	require.Len(t, out.Results, 17)
	churn := out.Results[3]
	assert.Equal(t, "check", churn.Impl)
	assert.Equal(t, 21.14, churn.Metrics["live-MiB"])
	assert.Equal(t, 1e6, churn.Metrics["mutexes"])
	assert.Equal(t, 0.0000153, out.Results[2].Metrics["live-MiB"])
	graph := out.Results[5]
	assert.Equal(t, "BenchmarkGraphScale", graph.Bench)
	assert.Equal(t, 1.0, graph.Metrics["cycle-ok"])
	assert.Equal(t, 24620.0, graph.Metrics["detect-us"])
	striped := out.Results[6]
	assert.Equal(t, "BenchmarkStriped", striped.Bench)
	assert.Equal(t, 1.148, striped.Metrics["full/empty"])
}

func TestParseTaggedImpl(t *testing.T) {
	out := parseFile(t, "tagged.txt")
	impls := map[string]bool{}
	for _, r := range out.Results {
		impls[r.Impl] = true
		assert.Equal(t, 2, r.Procs, r.Name)
	}
	assert.Equal(t, map[string]bool{"sync": true, "off-tag": true}, impls)
}

func TestParseOddLines(t *testing.T) {
	const text = `goos: linux
cpu: Some CPU @ 2.0GHz
BenchmarkX/impl=off-tag 	 100	 5.0 ns/op
BenchmarkX/impl=off-tag-16 	 100	 2.5 ns/op
BenchmarkLogs
    bench_test.go:12: a log line: with a colon
BenchmarkX/impl=check-2 	 ten	 5.0 ns/op
BenchmarkX/impl=check-2 	 100	 5.0 ns/op	 7
BenchmarkX/impl=check-2 	 100	 five ns/op
BenchmarkY/depth=40/impl=trace-2 	 100	 1e+03 ns/op	 1.5 custom-unit
--- FAIL: BenchmarkX/impl=check-2
--- FAIL: TestSomething (0.00s)
FAIL
`
	out, err := Parse(strings.NewReader(text))
	require.NoError(t, err)
	assert.Equal(t, "Some CPU @ 2.0GHz", out.CPU)
	require.Len(t, out.Results, 3)
	assert.Equal(t, Result{Name: "BenchmarkX/impl=off-tag", Bench: "BenchmarkX", Impl: "off-tag", Procs: 1, Iters: 100,
		Metrics: map[string]float64{"ns/op": 5}}, out.Results[0])
	assert.Equal(t, 16, out.Results[1].Procs)
	assert.Equal(t, "off-tag", out.Results[1].Impl)
	y := out.Results[2]
	assert.Equal(t, "BenchmarkY", y.Bench)
	assert.Equal(t, "trace", y.Impl)
	assert.Equal(t, map[string]float64{"ns/op": 1000, "custom-unit": 1.5}, y.Metrics)
	assert.Equal(t, []string{"BenchmarkX/impl=check-2", "TestSomething"}, out.Failed)
}
