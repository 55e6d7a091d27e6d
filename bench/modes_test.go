//go:build !syncwatch_off

package bench_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// instrumented is false when the syncwatch_off build tag compiled
// lockorder's checks away.
const instrumented = true

// withDeadlock says whether go-deadlock is measured in this build.
const withDeadlock = true

// lockorderRuns are the lockorder sub-benchmarks of this build: the same
// code in each run-time mode.
var lockorderRuns = []lockorderRun{
	{"off", lockorder.ModeOff},
	{"trace", lockorder.ModeTrace},
	{"check", lockorder.ModeCheck},
}

// useMode puts lockorder in mode m for the rest of b, and restores the
// mode it found when b ends.
func useMode(b *testing.B, m lockorder.Mode) {
	prev := lockorder.CurrentMode()
	lockorder.Configure(lockorder.WithMode(m))
	b.Cleanup(func() { lockorder.Configure(lockorder.WithMode(prev)) })
}
