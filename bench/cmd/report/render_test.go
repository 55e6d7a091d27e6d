package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/bench"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.md")

// sampleDetections is a fixed detection outcome, so that the golden report
// does not depend on lockorder's behaviour today.
var sampleDetections = []bench.Detection{
	{Scenario: "2-lock inversion", Bug: true, Lockorder: true, Deadlock: true},
	{Scenario: "3-lock cycle", Bug: true, Lockorder: true, Deadlock: false},
	{Scenario: "TryLock back-off", Bug: false, Lockorder: false, Deadlock: true},
}

// TestRenderGolden renders the captured sample runs and compares the
// report with testdata/report.golden.md. Run with -update to accept a
// change.
func TestRenderGolden(t *testing.T) {
	d := sampleData(t)
	d.Env = Env{
		GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", CPU: "Intel(R) Xeon(R) Processor",
		GOMAXPROCS: 2, Date: time.Date(2026, 11, 22, 0, 30, 0, 0, time.UTC), Count: 2, Benchtime: "20ms",
	}
	d.SameCode = CompareDiagnostics(readTestdata(t, "gcflags-m-syncimpl.txt"), readTestdata(t, "gcflags-m-lockorderimpl.txt"))
	got := Render(d, Evaluate(d), sampleDetections)

	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}

func TestRenderSections(t *testing.T) {
	d := sampleData(t)
	d.Failed = []string{"BenchmarkChurn/impl=check-2"}
	got := Render(d, Evaluate(d), sampleDetections)

	for _, want := range []string{
		"## Targets: ",
		"| (a) uncontended Lock/Unlock | sync | 18.1 | 0 | 0 | 1.00x | — |",
		"| (a) uncontended Lock/Unlock | sync, syncwatch_off run | 21.1 | 0 | 0 | 1.00x | — |",
		"| (a) uncontended Lock/Unlock | lockorder, syncwatch_off run | 21.4 | 0 | 0 | 1.02x | — |",
		"| (f) mutex per goroutine, parallel, -cpu 1 | lockorder check | 88.2 | 0 | 0 |",
		"## (i) 1M short-lived mutexes: metrics (medians)",
		"| impl | live-MiB | mutexes | ns/mutex |",
		"| lockorder check | 21.1 | 1,000,000 | 10,248 |",
		"| 3-lock cycle | report | reported | **missed** |",
		"| TryLock back-off | stay silent | silent | **false report** |",
		"| **correct** |  | **3/3** | **1/3** |",
		"## Failed",
		"- BenchmarkChurn/impl=check-2",
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, Render(d, nil, nil), "## Detection")

	// Every table row has as many cells as its header.
	var cols int
	for _, line := range strings.Split(got, "\n") {
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		n := strings.Count(line, " |")
		if cols == 0 {
			cols = n
		}
		if !strings.HasPrefix(line, "|--") && !strings.HasPrefix(line, "|---") {
			assert.Equal(t, cols, n, line)
		}
	}
}
