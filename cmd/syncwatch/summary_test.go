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
	assert.Contains(t, out.String(), "syncwatch: 1 distinct finding(s)\n", "no leak: the count alone")
}

// Goroutines leaked at one place, which a binary reports one by one (each
// fails its test), are one finding of the summary with their count; a
// leak elsewhere, or on another class of lock, is another.
func TestSummaryCountsLeaksOfOnePlaceAsOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "findings")
	var lines []byte
	leak := func(id, site string, classes ...string) lockordertest.Finding {
		return lockordertest.Finding{Binary: "cache.test", Test: "TestGet", Kind: lockorder.KindLeaked, Key: "leaked-goroutine:" + id,
			Message: "goroutine " + id + " is blocked for good in select at " + site, Sites: []string{site}, Classes: classes, Instances: 1}
	}
	for _, f := range []lockordertest.Finding{
		leak("12", "cache.(*policy).loop (policy.go:61)"),
		leak("14", "cache.(*policy).loop (policy.go:61)"),
		leak("19", "cache.(*policy).loop (policy.go:61)"),
		leak("21", "cache.(*store).flush (store.go:9)"),
		leak("23", "cache.(*store).get (store.go:30)", "cache.store.mu"),
		leak("25", "cache.(*store).get (store.go:30)", "cache.index.mu"),
	} {
		b, err := json.Marshal(f)
		require.NoError(t, err)
		lines = append(append(lines, b...), '\n')
	}
	require.NoError(t, os.WriteFile(path, lines, 0o644))
	fs, err := readFindings(path)
	require.NoError(t, err)
	require.Len(t, fs, 4)
	var out bytes.Buffer
	writeSummary(&out, fs)
	assert.Contains(t, out.String(), "1. leaked-goroutine: goroutine 12 is blocked for good in select at cache.(*policy).loop (policy.go:61)\n   at cache.(*policy).loop (policy.go:61)\n   seen in 1 test(s): TestGet; 3 instance(s); in cache.test")
	assert.Contains(t, out.String(), "syncwatch: 4 distinct finding(s), all leaked-goroutine (goroutines left blocked for good)\n")
	out.Reset()
	writeSummary(&out, append(fs, deadlockFinding(lockorder.KindCycle, "cycle of 2 locks")))
	assert.Contains(t, out.String(), "syncwatch: 5 distinct finding(s): 4 leaked-goroutine (goroutines left blocked for good), 1 of other kinds\n")
}

// A deadlock a test binary reported on evidence that is not proof counts
// in the summary only if that binary then ran into its -timeout: otherwise
// its waits ended, or VerifyTestMain recorded it. The harness's own list
// at the end ("in TestX: lockorder: ...") is in the findings file, not
// counted again.
func TestUnprovenDeadlocksCountOnlyAtTheirBinarysTimeout(t *testing.T) {
	const report = "lockorder: deadlock: cycle of 2 goroutines blocked, as is every goroutine of the program: goroutine 7 waits for lock a#1 held by goroutine 8; goroutine 8 waits for lock b#1 held by goroutine 7\n"
	const listed = "in TestX: lockorder: recursive-lock: goroutine 5 locks q#1, which it already holds for writing, and is blocked, as is every goroutine of the program\n"
	const proved = "panic: lockorder: deadlock: cycle of 2 goroutines blocked for good: goroutine 3 waits for lock c#1 held by goroutine 4; goroutine 4 waits for lock d#1 held by goroutine 3 (the report is above)\n"

	// Plain output: one block per package, ended by its ok or FAIL line.
	var out bytes.Buffer
	d := &deadlockWatcher{w: &out}
	plain := report + listed + "ok  \texample.com/a\t9.1s\n" + // a's waits ended
		report + proved + "FAIL\texample.com/b\t4.1s\n" +
		report + "panic: test timed out after 20s\n" + "goroutine 7 [sync.Mutex.Lock, 1 minute]:\n" + "goroutine 8 [sync.Mutex.Lock, 1 minute]:\n" + "FAIL\texample.com/c\t20.1s\n" +
		// d's report ended (its goroutines are gone by the timeout, which
		// another test's hang brought): not counted.
		report + "panic: test timed out after 20s\n" + "goroutine 31 [chan receive, 1 minute]:\n" + "FAIL\texample.com/d\t20.1s\n"
	io.WriteString(d, plain)
	if out.String() != plain {
		t.Error("the output was not passed through as it came")
	}
	fs := d.findings()
	if len(fs) != 2 || !strings.HasPrefix(fs[0].Message, "cycle of 2 goroutines blocked for good") ||
		fs[1].Kind != lockorder.KindDeadlock || fs[1].Message != strings.TrimSuffix(strings.TrimPrefix(report, "lockorder: deadlock: "), "\n") {
		t.Fatalf("plain output: %d findings, want the proved one and c's unproven one", len(fs))
	}

	// go test -json: events of packages interleaved; a test passing in
	// the package meanwhile does not end it.
	ev := func(pkg, test, action, output string) string {
		b, _ := json.Marshal(map[string]string{"Package": pkg, "Test": test, "Action": action, "Output": output})
		return string(b) + "\n"
	}
	d = &deadlockWatcher{w: io.Discard}
	io.WriteString(d, ev("p/a", "TestA", "output", "lockorder: recursive-lock: goroutine 9 locks m#1, which it already holds for writing, and is blocked, as is every goroutine of the program\n")+
		ev("p/b", "TestB", "output", report)+
		ev("p/a", "TestOther", "pass", "")+
		ev("p/a", "", "output", "panic: test timed out after 20s\n")+
		ev("p/a", "", "output", "goroutine 9 [sync.Mutex.Lock, 1 minute]:\n")+
		ev("p/b", "", "pass", "")+
		ev("p/a", "", "fail", ""))
	fs = d.findings()
	if len(fs) != 1 || fs[0].Kind != lockorder.KindRecursiveLock || !strings.HasSuffix(fs[0].Message, unprovenWords) {
		t.Fatalf("-json: %d findings, want p/a's recursive-lock alone", len(fs))
	}
	var sum bytes.Buffer
	writeSummary(&sum, fs)
	if !strings.Contains(sum.String(), "ran into its -timeout") {
		t.Errorf("the summary does not say the binary timed out:\n%s", sum.String())
	}
}

// A cycle whose orders one line took in turn (a transfer locking its two
// accounts in argument order) names that line once, with its count, and
// every other line once.
func TestSummaryNamesALineOfTwoOrdersOnce(t *testing.T) {
	var out bytes.Buffer
	writeSummary(&out, []*finding{{Finding: lockordertest.Finding{
		Kind: lockorder.KindCycle, Message: "cycle of 3 locks",
		Sites: []string{"bank.Transfer (bank.go:21)", "bank.Audit (audit.go:9)", "bank.Transfer (bank.go:21)"},
	}, binaries: []string{"bank.test"}, tests: []string{"TestTransfer"}, instances: 1}})
	assert.Contains(t, out.String(), "   at bank.Transfer (bank.go:21) (2 of the cycle's orders)\n   at bank.Audit (audit.go:9)\n   seen in")
	assert.Equal(t, 1, strings.Count(out.String(), "bank.go:21"))
}
