package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dataFrom collects benchmark lines given as text, untagged and tagged.
func dataFrom(t *testing.T, untagged, tagged string) *Data {
	t.Helper()
	var runs []Run
	for i, text := range []string{untagged, tagged} {
		out, err := Parse(strings.NewReader(text))
		require.NoError(t, err)
		runs = append(runs, Run{Tagged: i == 1, Out: out})
	}
	return Collect(Env{}, runs)
}

// checkFor returns the evaluated target of case id whose text starts with
// prefix.
func checkFor(t *testing.T, checks []Check, id, prefix string) Check {
	t.Helper()
	label := caseByID(id).Label()
	for _, c := range checks {
		if c.Case == label && strings.HasPrefix(c.Target, prefix) {
			return c
		}
	}
	t.Fatalf("no target %q for case %s", prefix, id)
	return Check{}
}

func TestTargetsBoundaries(t *testing.T) {
	d := dataFrom(t, `
BenchmarkUncontended/impl=sync-2 1 10 ns/op 0 B/op 0 allocs/op
BenchmarkUncontended/impl=trace-2 1 13 ns/op 0 B/op 0 allocs/op
BenchmarkUncontended/impl=check-2 1 40 ns/op 0 B/op 0 allocs/op
BenchmarkUncontended/impl=deadlock-2 1 1200 ns/op 24 B/op 1 allocs/op
BenchmarkNestedPair/impl=sync-2 1 10 ns/op 0 B/op 0 allocs/op
BenchmarkNestedPair/impl=trace-2 1 13.1 ns/op 0 B/op 0 allocs/op
BenchmarkNestedPair/impl=check-2 1 40 ns/op 8 B/op 1 allocs/op
BenchmarkNestedPair/impl=deadlock-2 1 1199 ns/op 24 B/op 1 allocs/op
BenchmarkHeldElsewhere/impl=check-2 1 48 ns/op 0 B/op 0 allocs/op
BenchmarkDeepStack/impl=check-2 1 60.1 ns/op 0 B/op 0 allocs/op
`, "")
	checks := Evaluate(d)

	// Exactly at the bound passes; just past it fails.
	assert.Equal(t, Pass, checkFor(t, checks, "a", "check").Verdict)
	assert.Equal(t, "4.00x, 0 allocs", checkFor(t, checks, "a", "check").Measured)
	assert.Equal(t, Pass, checkFor(t, checks, "a", "trace").Verdict)
	assert.Equal(t, Fail, checkFor(t, checks, "b", "trace").Verdict)
	assert.Equal(t, Pass, checkFor(t, checks, "a", "go-deadlock").Verdict)
	assert.Equal(t, Fail, checkFor(t, checks, "b", "go-deadlock").Verdict)
	// Within the time bound but allocating.
	b := checkFor(t, checks, "b", "check")
	assert.Equal(t, Fail, b.Verdict)
	assert.Equal(t, "4.00x, 1 allocs", b.Measured)

	assert.Equal(t, Pass, checkFor(t, checks, "g", "check").Verdict)
	assert.Equal(t, "1.20x (48.0 vs 40.0 ns)", checkFor(t, checks, "g", "check").Measured)
	assert.Equal(t, Fail, checkFor(t, checks, "h", "check").Verdict)

	// What the run did not measure is n/a, not FAIL.
	d4 := checkFor(t, checks, "d", "check")
	assert.Equal(t, NoData, d4.Verdict)
	assert.Equal(t, "not measured", d4.Measured)
	assert.Equal(t, NoData, checkFor(t, checks, "a", "off-tag").Verdict)
}

func TestTargetsScaling(t *testing.T) {
	d := dataFrom(t, `
BenchmarkPerGoroutine/impl=sync 1 20 ns/op
BenchmarkPerGoroutine/impl=sync-2 1 10 ns/op
BenchmarkPerGoroutine/impl=check 1 60 ns/op
BenchmarkPerGoroutine/impl=check-2 1 42 ns/op
BenchmarkPerGoroutine/impl=deadlock 1 1800 ns/op
BenchmarkPerGoroutine/impl=deadlock-2 1 2000 ns/op
`, "")
	checks := Evaluate(d)
	vs := checkFor(t, checks, "f", "check ≤ 4x")
	assert.Equal(t, "3.00x (-cpu 1), 4.20x (-cpu 2)", vs.Measured)
	assert.Equal(t, Fail, vs.Verdict)
	sc := checkFor(t, checks, "f", "check at -cpu 2")
	assert.Equal(t, "0.70x (42.0 ns at -cpu 2, 60.0 ns at -cpu 1); sync: 0.50x", sc.Measured)
	assert.Equal(t, Pass, sc.Verdict)
	assert.Equal(t, Pass, checkFor(t, checks, "f", "go-deadlock").Verdict)
}

func TestTargetsMetrics(t *testing.T) {
	d := dataFrom(t, `
BenchmarkChurn/impl=check-2 1 1e9 ns/op 16.5 live-MiB
BenchmarkGraphScale/impl=check-2 1 1e9 ns/op 5 cycle-len 0 cycle-ok 999 detect-us 4000 ns/edge
`, "")
	checks := Evaluate(d)
	churn := checkFor(t, checks, "i", "check")
	assert.Equal(t, "16.5 MiB", churn.Measured)
	assert.Equal(t, Fail, churn.Verdict)
	assert.Equal(t, Pass, checkFor(t, checks, "j", "new").Verdict)
	closing := checkFor(t, checks, "j", "closing")
	assert.Equal(t, Fail, closing.Verdict, "fast, but the cycle was incomplete")
	assert.Equal(t, "999 µs, but not every report held the whole cycle", closing.Measured)
	cycle := checkFor(t, checks, "j", "the report")
	assert.Equal(t, Fail, cycle.Verdict)
	assert.Equal(t, "incomplete or missing (expected 5 edges)", cycle.Measured)
}

func TestTargetsScale(t *testing.T) {
	d := dataFrom(t, `
BenchmarkLiveGoroutines/impl=sync-2 1 1e9 ns/op 40 heap-MiB 0.5 pause-ms
BenchmarkLiveGoroutines/impl=check-2 1 1.5e9 ns/op 45 heap-MiB 12 pause-ms
BenchmarkWaitGroupGo/impl=sync-2 1 1e9 ns/op 1 growth
BenchmarkWaitGroupGo/impl=check-2 1 2e9 ns/op 1.2 growth
`, "")
	checks := Evaluate(d)
	assert.Equal(t, Pass, checkFor(t, checks, "l", "check ≤ 2x").Verdict)
	pause := checkFor(t, checks, "l", "check: no pause")
	assert.Equal(t, Fail, pause.Verdict)
	assert.Equal(t, "12 ms", pause.Measured)
	heap := checkFor(t, checks, "l", "check: live heap")
	assert.Equal(t, Fail, heap.Verdict)
	assert.Equal(t, "1.12x (45 vs 40 heap-MiB)", heap.Measured)
	assert.Equal(t, Pass, checkFor(t, checks, "m", "check ≤ 3x").Verdict)
	assert.Equal(t, Pass, checkFor(t, checks, "m", "check: constant").Verdict)
}

func TestTargetSameCode(t *testing.T) {
	d := dataFrom(t, "", `
BenchmarkUncontended/impl=sync-2 1 10 ns/op 0 B/op 0 allocs/op
BenchmarkUncontended/impl=off-tag-2 1 10.2 ns/op 0 B/op 0 allocs/op
`)
	assert.Equal(t, NoData, checkFor(t, Evaluate(d), "a", "off-tag").Verdict, "no compiler check, no verdict")

	d.SameCode = &SameCode{Inlined: 30}
	c := checkFor(t, Evaluate(d), "a", "off-tag")
	assert.Equal(t, Pass, c.Verdict)
	assert.Equal(t, "compiler: 30 lockorder calls inlined, inlining and escapes as for sync; 1.02x sync; 0 allocs", c.Measured)

	d.SameCode.OnlySync = []string{"22:12: inlining call to sync.(*Mutex).Unlock"}
	assert.Equal(t, Fail, checkFor(t, Evaluate(d), "a", "off-tag").Verdict)
}

func TestTally(t *testing.T) {
	n := Tally([]Check{{Verdict: Pass}, {Verdict: Fail}, {Verdict: Pass}, {Verdict: NoData}})
	assert.Equal(t, map[Verdict]int{Pass: 2, Fail: 1, NoData: 1}, n)
	assert.Equal(t, "PASS", Pass.String())
	assert.Equal(t, "FAIL", Fail.String())
	assert.Equal(t, "n/a", NoData.String())
}

func TestTargetDetection(t *testing.T) {
	closing := func(lines string) Check {
		return checkFor(t, Evaluate(dataFrom(t, lines, "")), "j", "closing")
	}
	c := closing("BenchmarkGraphScale/impl=check-2 1 1e9 ns/op 5 cycle-len 1 cycle-ok 1000 detect-us 4000 ns/edge")
	assert.Equal(t, Pass, c.Verdict)
	assert.Equal(t, "1,000 µs", c.Measured)
	c = closing("BenchmarkGraphScale/impl=check-2 1 1e9 ns/op 5 cycle-len 1 cycle-ok 1001 detect-us 4000 ns/edge")
	assert.Equal(t, Fail, c.Verdict)
	c = closing("BenchmarkGraphScale/impl=check-2 1 1e9 ns/op 5 cycle-len 0 cycle-ok 4000 ns/edge")
	assert.Equal(t, Fail, c.Verdict)
	assert.Equal(t, "never reported", c.Measured)
	assert.Equal(t, NoData, closing("").Verdict)
}
