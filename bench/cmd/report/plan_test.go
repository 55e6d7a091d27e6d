package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanEverything(t *testing.T) {
	plan := Plan(Options{Count: 5, Benchtime: "1s"})
	require.Len(t, plan, 20)
	cmds := make([]string, len(plan))
	for i, inv := range plan {
		cmds[i] = inv.String()
	}
	const common = "-benchmem -count 1"
	micros := "go test -run ^$ -bench ^(BenchmarkUncontended|BenchmarkNestedPair|BenchmarkNested4|BenchmarkRLock|" +
		"BenchmarkSharedParallel|BenchmarkRLockParallel|BenchmarkHeldElsewhere|BenchmarkDeepStack)$ " + common + " -benchtime 1s -timeout 0 "
	// Five rounds of the timed cases, each with every build and -cpu.
	for r := range 5 {
		assert.Equal(t, micros+benchPkg, cmds[3*r], "round %d", r)
		assert.Equal(t, "go test -run ^$ -bench ^(BenchmarkPerGoroutine)$ "+common+" -benchtime 1s -timeout 0 -cpu 1,2 "+benchPkg, cmds[3*r+1], "round %d", r)
		assert.Equal(t, micros+"-tags syncwatch_off "+benchPkg, cmds[3*r+2], "round %d", r)
	}
	// Then one process per count for the one-shot cases.
	for _, cmd := range cmds[15:] {
		assert.Equal(t, "go test -run ^$ -bench ^(BenchmarkChurn|BenchmarkGraphScale|BenchmarkStriped|BenchmarkLiveGoroutines|BenchmarkWaitGroupGo|BenchmarkCacheNodes|BenchmarkFreshGroups)$ -benchmem -count 1 -benchtime 1x -timeout 0 "+benchPkg, cmd)
	}
	for i, inv := range plan {
		assert.Equal(t, i < 15 && i%3 == 2, inv.Tagged, cmds[i])
	}
}

func TestPlanFilter(t *testing.T) {
	plan := Plan(Options{Count: 1, Benchtime: "100ms", Filter: regexp.MustCompile("Uncontended|Churn")})
	require.Len(t, plan, 3)
	assert.Contains(t, plan[0].String(), "-bench ^(BenchmarkUncontended)$")
	assert.True(t, plan[1].Tagged)
	assert.Contains(t, plan[1].String(), "-bench ^(BenchmarkUncontended)$")
	assert.Contains(t, plan[2].String(), "-bench ^(BenchmarkChurn)$ -benchmem -count 1 -benchtime 1x")

	assert.Empty(t, Plan(Options{Count: 1, Benchtime: "1s", Filter: regexp.MustCompile("NoSuchCase")}))
}
