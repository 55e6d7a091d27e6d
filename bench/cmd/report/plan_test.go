package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanEverything(t *testing.T) {
	plan := Plan(Options{Count: 5, Benchtime: "1s"})
	require.Len(t, plan, 8)
	cmds := make([]string, len(plan))
	for i, inv := range plan {
		cmds[i] = inv.String()
	}
	const common = "-benchmem -count 5"
	assert.Equal(t, "go test -run ^$ -bench ^(BenchmarkUncontended|BenchmarkNestedPair|BenchmarkNested4|BenchmarkRLock|"+
		"BenchmarkSharedParallel|BenchmarkRLockParallel|BenchmarkHeldElsewhere|BenchmarkDeepStack)$ "+common+" -benchtime 1s -timeout 0 "+benchPkg, cmds[0])
	assert.Equal(t, "go test -run ^$ -bench ^(BenchmarkPerGoroutine)$ "+common+" -benchtime 1s -timeout 0 -cpu 1,2 "+benchPkg, cmds[1])
	// One process per count for the one-shot cases.
	for _, cmd := range cmds[2:7] {
		assert.Equal(t, "go test -run ^$ -bench ^(BenchmarkChurn|BenchmarkGraphScale)$ -benchmem -count 1 -benchtime 1x -timeout 0 "+benchPkg, cmd)
	}
	assert.True(t, strings.HasSuffix(cmds[7], common+" -benchtime 1s -timeout 0 -tags syncwatch_off "+benchPkg), cmds[7])
	for i, inv := range plan {
		assert.Equal(t, i == 7, inv.Tagged, cmds[i])
	}
}

func TestPlanFilter(t *testing.T) {
	plan := Plan(Options{Count: 1, Benchtime: "100ms", Filter: regexp.MustCompile("Uncontended|Churn")})
	require.Len(t, plan, 3)
	assert.Contains(t, plan[0].String(), "-bench ^(BenchmarkUncontended)$")
	assert.Contains(t, plan[1].String(), "-bench ^(BenchmarkChurn)$ -benchmem -count 1 -benchtime 1x")
	assert.True(t, plan[2].Tagged)

	assert.Empty(t, Plan(Options{Count: 1, Benchtime: "1s", Filter: regexp.MustCompile("NoSuchCase")}))
}
