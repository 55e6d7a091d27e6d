//go:build syncwatch_off

package bench_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// instrumented is false when the syncwatch_off build tag compiled
// lockorder's checks away.
const instrumented = false

// withDeadlock says whether go-deadlock is measured in this build. This
// build measures only what the tag removes, next to sync.
const withDeadlock = false

// offTag labels lockorder's only sub-benchmark in this build.
const offTag = "off-tag"

// lockorderRuns are the lockorder sub-benchmarks of this build: one, since
// the build tag left no modes to choose from.
var lockorderRuns = []lockorderRun{{offTag, lockorder.ModeOff}}

// useMode does nothing: with the syncwatch_off tag a lockorder.Mutex is a
// sync.Mutex whatever the mode says.
func useMode(*testing.B, lockorder.Mode) {}
