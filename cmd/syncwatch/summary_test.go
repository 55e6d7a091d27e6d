package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// The summary counts every test a finding was seen in, in every binary:
// those a binary grouped under one report (Tests), not only the test of
// the occurrence it shows (Test).
func TestSummaryCountsEveryTestOfAFinding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "findings")
	var lines []byte
	for _, f := range []lockordertest.Finding{
		{Binary: "store.test", Test: "TestPut", Tests: []string{"TestPut", "TestBatch"}, Kind: lockorder.KindCycle, Key: "k", Message: "cycle", Instances: 8},
		{Binary: "cmd.test", Test: "TestCompact", Tests: []string{"TestCompact", "TestPut"}, Kind: lockorder.KindCycle, Key: "k", Message: "cycle", Instances: 1},
	} {
		b, err := json.Marshal(f)
		require.NoError(t, err)
		lines = append(append(lines, b...), '\n')
	}
	require.NoError(t, os.WriteFile(path, lines, 0o644))
	fs, err := readFindings(path)
	require.NoError(t, err)
	require.Len(t, fs, 1, "one code-level cycle, one finding")
	var out bytes.Buffer
	writeSummary(&out, fs)
	assert.Contains(t, out.String(), "seen in 3 test(s): TestPut, TestBatch, TestCompact; 9 instance(s); in store.test, cmd.test")
}

// A deadlock a test binary reported on evidence that is not proof counts
// in the summary only if a binary then ran into its -timeout: otherwise
// its waits ended, or VerifyTestMain recorded it.
func TestUnprovenDeadlocksCountOnlyAtATimeout(t *testing.T) {
	const report = "lockorder: deadlock: cycle of 2 goroutines blocked, as is every goroutine of the program: goroutine 7 waits for lock a#1 held by goroutine 8; goroutine 8 waits for lock b#1 held by goroutine 7\n"
	const recursive = `{"Action":"output","Output":"lockorder: recursive-lock: goroutine 9 locks m#1, which it already holds for writing, and is blocked, as is every goroutine of the program\n"}` + "\n"
	const proved = "panic: lockorder: deadlock: cycle of 2 goroutines blocked for good: goroutine 3 waits for lock c#1 held by goroutine 4; goroutine 4 waits for lock d#1 held by goroutine 3 (the report is above)\n"

	var out bytes.Buffer
	d := &deadlockWatcher{w: &out}
	io.WriteString(d, report+recursive+proved)
	fs := d.findings()
	if len(fs) != 1 || !strings.HasPrefix(fs[0].Message, "cycle of 2 goroutines blocked for good") {
		t.Fatalf("without a timeout: %d findings, want the proved one", len(fs))
	}
	if out.String() != report+recursive+proved {
		t.Error("the output was not passed through as it came")
	}

	io.WriteString(d, "panic: test timed out after 20s\n")
	fs = d.findings()
	if len(fs) != 3 {
		t.Fatalf("after a timeout: %d findings, want 3", len(fs))
	}
	if fs[1].Kind != lockorder.KindDeadlock || fs[1].Message != strings.TrimSuffix(strings.TrimPrefix(report, "lockorder: deadlock: "), "\n") {
		t.Errorf("the unproven deadlock: %s: %q", fs[1].Kind, fs[1].Message)
	}
	if fs[2].Kind != lockorder.KindRecursiveLock || !strings.HasSuffix(fs[2].Message, "as is every goroutine of the program") {
		t.Errorf("the unproven recursive-lock (from -json): %s: %q", fs[2].Kind, fs[2].Message)
	}
	var sum bytes.Buffer
	writeSummary(&sum, fs)
	if !strings.Contains(sum.String(), "ran into its -timeout") {
		t.Errorf("the summary does not say the binary timed out:\n%s", sum.String())
	}
}
