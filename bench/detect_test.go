package bench_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/bench"
	"github.com/syncwatch/syncwatch/lockorder"
)

func TestDetect(t *testing.T) {
	if !instrumented {
		t.Skip("syncwatch_off: lockorder detects nothing")
	}
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	defer lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))

	ds := bench.Detect()
	require.Len(t, ds, 6)
	assert.Equal(t, lockorder.ModeTrace, lockorder.CurrentMode(), "Detect restores the mode")
	assert.Empty(t, lockorder.Violations(), "Detect leaves no violations behind")

	bugs := 0
	for _, d := range ds {
		assert.True(t, d.Correct(d.Lockorder), "lockorder got %q wrong", d.Scenario)
		if d.Bug {
			bugs++
		}
	}
	assert.Equal(t, 4, bugs)
	// go-deadlock's documented behaviour: it finds the plain inversion
	// (so its reports are counted) and reports the TryLock back-off.
	assert.True(t, ds[0].Deadlock, ds[0].Scenario)
	assert.True(t, ds[4].Deadlock, ds[4].Scenario)
	assert.False(t, ds[1].Deadlock, ds[1].Scenario)
}

func TestCorrect(t *testing.T) {
	bug := bench.Detection{Bug: true}
	assert.True(t, bug.Correct(true))
	assert.False(t, bug.Correct(false))
	safe := bench.Detection{Bug: false}
	assert.True(t, safe.Correct(false))
	assert.False(t, safe.Correct(true))
}
