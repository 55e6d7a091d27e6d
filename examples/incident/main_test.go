package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinary builds the command and runs it as a user would, both ways,
// checking the exit status and the key lines of the output.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "incident")
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	t.Run("incident", func(t *testing.T) {
		dir := t.TempDir()
		out := runBinary(ctx, t, bin, "-timeout", testTimeout.String(), "-out", dir)
		for _, want := range []string{
			"lockorder: lock-order-cycle: cycle of 2 locks: aggregation_lock -> worker_lock -> aggregation_lock",
			"reported before any deadlock",
			"lockorder: not-held: AssertHeld: goroutine",
			"staleness 15 > bound 10: REJECTED",
			"staleness 12 > bound 10: REJECTED",
			"staleness 18 > bound 10: REJECTED",
			"staleness 10, bound 10: accepted",
			"31/32 arrived, missing [17]",
			"(rank 3), which is waiting at this barrier",
			"recovered:",
			"lock-order-cycle",
			"barrier-broken",
			filepath.Join(dir, "spans.jsonl"),
			filepath.Join(dir, "lockgraph.dot"),
			filepath.Join(dir, "waits.pb.gz"),
			"next: go run ./examples/incident -fixed",
		} {
			assert.Contains(t, out, want)
		}
		assert.NotContains(t, out, "NOT CAUGHT")
		for _, f := range []string{"spans.jsonl", "lockgraph.dot", "waits.pb.gz"} {
			st, err := os.Stat(filepath.Join(dir, f))
			if assert.NoError(t, err) {
				assert.Positive(t, st.Size(), f)
			}
		}
	})
	t.Run("fixed", func(t *testing.T) {
		out := runBinary(ctx, t, bin, "-fixed", "-timeout", testTimeout.String(), "-out", t.TempDir())
		for _, want := range []string{
			"violations that count (not expected): 0",
			"in order with no gap",
			"converged",
		} {
			assert.Contains(t, out, want)
		}
		assert.Equal(t, 4, strings.Count(out, " clean\n"), out)
		assert.NotContains(t, out, "FAILED")
		assert.NotContains(t, out, "lock-order-cycle:")
	})
}

// runBinary runs bin with args, requires exit status 0 and returns its
// standard output and error.
func runBinary(ctx context.Context, t *testing.T, bin string, args ...string) string {
	t.Helper()
	start := time.Now()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	t.Logf("%s %s (%v):\n%s", filepath.Base(bin), strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
	require.NoError(t, err)
	return string(out)
}
