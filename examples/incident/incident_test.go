package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
	"github.com/syncwatch/syncwatch/paramserver"
)

// testTimeout is the barrier timeout of the tests: phase 2 waits this long.
const testTimeout = 300 * time.Millisecond

func runForTest(t *testing.T, fixed bool) (Result, string) {
	t.Helper()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := run(ctx, Config{Fixed: fixed, OutDir: t.TempDir(), BarrierTimeout: testTimeout, Out: &out})
	t.Log("\n" + out.String())
	require.NoError(t, err)
	return res, out.String()
}

// staleFigures returns the staleness of the rejected and of the accepted
// late gradients, by worker.
func staleFigures(events []StaleEvent) (rejected, accepted map[int]uint64) {
	rejected, accepted = map[int]uint64{}, map[int]uint64{}
	for _, e := range events {
		if e.Accepted {
			accepted[e.Worker] = e.Staleness
		} else {
			rejected[e.Worker] = e.Staleness
		}
	}
	return rejected, accepted
}

func TestIncidentCatchesEveryCause(t *testing.T) {
	res, out := runForTest(t, false)

	// The ABBA: one cycle, between the coordinator's two locks, reported
	// in phase 1, long before the deadlock of phase 2.
	assert.Equal(t, 1, res.Violations[lockorder.KindCycle])
	assert.ElementsMatch(t, []string{"worker_lock", "aggregation_lock"}, res.Cycle)
	assert.GreaterOrEqual(t, res.Violations[barrier.KindLockHeld], 1)
	assert.Zero(t, res.BlockedAtCycle, "reported before anything blocked")

	// The unlocked parameter server.
	assert.GreaterOrEqual(t, res.Violations[lockorder.KindNotHeld], 2, "getParameters and applyGradient")

	// The staleness bound: the incident's figures rejected, the bound itself accepted.
	rejected, accepted := staleFigures(res.Stale)
	assert.Equal(t, map[int]uint64{23: 15, 17: 12, 9: 18}, rejected)
	assert.Equal(t, map[int]uint64{5: 10}, accepted)
	for _, e := range res.Stale {
		assert.EqualValues(t, maxStaleness, e.Max)
	}
	assert.Equal(t, 3, res.Violations[paramserver.KindStaleRejected])

	// The barrier: broken once, rank 17 missing, and why.
	require.NotNil(t, res.Broken)
	assert.Equal(t, []int{17}, res.Missing)
	require.Len(t, res.Why, 1)
	assert.Regexp(t, `^rank 17: waiting for lock aggregation_lock#\d+, held by goroutine \d+ \(rank 3\), which is waiting at this barrier$`, res.Why[0])
	assert.Equal(t, 3, res.Broken.Why[0].HolderRank)
	assert.Equal(t, 1, res.Violations[barrier.KindBroken])
	assert.GreaterOrEqual(t, res.Violations[barrier.KindSlow], 1)
	assert.Equal(t, 1, res.BlockedAtSlow, "rank 17, blocked on aggregation_lock")
	assert.GreaterOrEqual(t, res.Broken.Waited, testTimeout)
	assert.Less(t, res.Broken.Waited, testTimeout+2*time.Second)
	assert.True(t, res.Recovered, "every rank completed the generation after the break")

	// The summary: every symptom caught, in order, the cycle before the break.
	require.Len(t, res.Catches, 4)
	for _, c := range res.Catches {
		assert.True(t, c.OK, "%s not caught", c.Symptom)
	}
	assert.Equal(t, lockorder.KindCycle, res.Catches[0].Kind)
	assert.Equal(t, lockorder.KindNotHeld, res.Catches[1].Kind)
	assert.Equal(t, paramserver.KindStaleRejected, res.Catches[2].Kind)
	assert.Equal(t, barrier.KindBroken, res.Catches[3].Kind)
	assert.Less(t, res.Catches[0].At, res.Catches[3].At)
	assert.Less(t, res.Catches[0].At+testTimeout, res.Catches[3].At, "the cycle is reported before phase 2 starts")
	assert.NotContains(t, out, "NOT CAUGHT")
	assertOutputOrder(t, out)

	// Training worked despite the bugs, and the run ended within its bound.
	assert.Len(t, res.Losses, incidentSchedule.steps)
	assert.Less(t, res.Losses[len(res.Losses)-1], res.Losses[0]/100)
	assert.Less(t, res.Elapsed, testTimeout+10*time.Second)
	assert.False(t, res.VersionsChecked)

	assertFiles(t, res.Files, true)
}

func TestFixedIsClean(t *testing.T) {
	res, out := runForTest(t, true)

	assert.Zero(t, res.Unexpected)
	assert.NoError(t, lockordertest.Find(lockordertest.IncludeReported()))
	assert.Zero(t, res.Violations[lockorder.KindCycle])
	assert.Zero(t, res.Violations[barrier.KindLockHeld])
	assert.Zero(t, res.Violations[barrier.KindBroken])
	assert.Zero(t, res.Violations[lockorder.KindNotHeld])
	assert.Nil(t, res.Broken)
	assert.Empty(t, res.Missing)

	// Strict staleness, inside the server.
	rejected, accepted := staleFigures(res.Stale)
	assert.Equal(t, map[int]uint64{23: 15, 17: 12, 9: 18}, rejected)
	assert.Equal(t, map[int]uint64{5: 10}, accepted)

	// Every version, in order.
	assert.True(t, res.VersionsChecked)
	assert.True(t, res.VersionsContiguous)
	// One version per step, phase 2's included, and the accepted late gradient.
	assert.EqualValues(t, incidentSchedule.steps+2, res.FinalVersion)

	// Convergence.
	assert.Len(t, res.Losses, incidentSchedule.steps+1)
	assert.Less(t, res.FinalLoss, lossTarget)
	assert.Less(t, res.Losses[len(res.Losses)-1], res.Losses[0]/100)

	for _, c := range res.Catches {
		assert.True(t, c.OK, "%s: %s", c.Symptom, c.Detail)
	}
	assert.Contains(t, out, "violations that count (not expected): 0")
	assert.Contains(t, out, "converged")
	assertFiles(t, res.Files, false)
}

func assertFiles(t *testing.T, f Files, cycle bool) {
	t.Helper()
	spans, err := os.ReadFile(f.Spans)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(spans)), "\n")
	assert.Greater(t, len(lines), 32, "a span per worker at least")
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}"), "one JSON object a line")
	}
	dot, err := os.ReadFile(f.DOT)
	require.NoError(t, err)
	assert.Contains(t, string(dot), `"worker_lock" -> "aggregation_lock"`)
	if cycle {
		assert.Contains(t, string(spans), `"Name":"lock-order-cycle"`)
		assert.Contains(t, string(spans), `"Name":"barrier-broken"`)
		assert.Contains(t, string(spans), `"Name":"lock wait"`)
		assert.Contains(t, string(dot), `"aggregation_lock" -> "worker_lock"`)
		assert.Contains(t, string(dot), "color=red")
	} else {
		assert.NotContains(t, string(dot), `"aggregation_lock" -> "worker_lock"`)
		assert.NotContains(t, string(dot), "color=red")
	}
	prof, err := os.Stat(f.WaitProfile)
	require.NoError(t, err)
	assert.Positive(t, prof.Size())
	if f.SVG != "" {
		svg, err := os.ReadFile(f.SVG)
		require.NoError(t, err)
		assert.Contains(t, string(svg), "<svg")
	}
}

// A symptom the run did not observe is shown as NOT CAUGHT and fails the
// run: the table is made from observations, not written in advance.
func TestSummaryReportsWhatWasNotCaught(t *testing.T) {
	var out bytes.Buffer
	s := &sim{cfg: Config{Out: &out}.withDefaults(), start: time.Now(), maxStaleness: maxStaleness, sched: incidentSchedule}
	s.log = &eventLog{w: &out, start: s.start}
	// Only the stale gradients were seen, and one of them was applied.
	s.stale = []StaleEvent{{Worker: 23, Staleness: 15, Max: 10, Accepted: true}}
	res := Result{Violations: map[lockorder.Kind]int{}}
	res.Catches = s.catches(res)
	err := s.printSummary(res)
	require.Error(t, err)
	assert.Equal(t, 4, strings.Count(out.String(), "NOT CAUGHT"), out.String())
	for _, c := range res.Catches {
		assert.False(t, c.OK, c.Symptom)
	}
}

// assertOutputOrder checks that the output tells the story in the order it
// happened.
func assertOutputOrder(t *testing.T, out string) {
	t.Helper()
	want := []string{
		"lock-order-cycle: cycle of 2 locks",
		"path 1: rank ",
		"path 2: rank 3 ",
		"reported before any deadlock",
		"staleness 15 > bound 10: REJECTED",
		"staleness 12 > bound 10: REJECTED",
		"staleness 18 > bound 10: REJECTED",
		"staleness 10, bound 10: accepted",
		"phase 2:",
		"missing [17]",
		"which is waiting at this barrier",
		"recovered:",
		"summary:",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(out[at:], w)
		if !assert.GreaterOrEqual(t, i, 0, "%q after offset %d", w, at) {
			return
		}
		at += i + len(w)
	}
	re := regexp.MustCompile(`(?m)^  (ABBA deadlock|parameter-server race|staleness check|barrier 31/32)`)
	assert.Len(t, re.FindAllString(out, -1), 4)
}
