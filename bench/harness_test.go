package bench_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/bench"
	"github.com/syncwatch/syncwatch/lockorder"
)

// lockorderRun is one lockorder sub-benchmark: its impl label and the mode
// it sets.
type lockorderRun struct {
	label string
	mode  lockorder.Mode
}

// workload is one case, compiled once per implementation.
type workload struct {
	sync, lockorder, deadlock func(*testing.B)
}

// run runs w as sub-benchmarks impl=sync, then one per lockorder mode of
// this build (impl=off, impl=trace, impl=check, or impl=off-tag), then
// impl=deadlock. It fails a sub-benchmark that made either detector
// report: the workloads are free of lock-order bugs, so a report means the
// harness, not the measurement, is wrong.
func run(b *testing.B, w workload) {
	b.Run("impl=sync", w.sync)
	for _, r := range lockorderRuns {
		b.Run("impl="+r.label, func(b *testing.B) {
			useMode(b, r.mode)
			before := len(lockorder.Violations())
			w.lockorder(b)
			if n := len(lockorder.Violations()) - before; n > 0 {
				b.Errorf("lockorder reported %d violations during the benchmark", n)
			}
		})
	}
	if withDeadlock {
		b.Run("impl=deadlock", func(b *testing.B) {
			before := bench.DeadlockReports()
			w.deadlock(b)
			if n := bench.DeadlockReports() - before; n > 0 {
				b.Errorf("go-deadlock reported %d potential deadlocks during the benchmark", n)
			}
		})
	}
}
