package bench_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/bench/internal/impls/deadlockimpl"
	"github.com/syncwatch/syncwatch/bench/internal/impls/lockorderimpl"
	"github.com/syncwatch/syncwatch/bench/internal/impls/syncimpl"
	"github.com/syncwatch/syncwatch/lockorder"
)

// churned is how many short-lived mutexes one op of case (i) creates, for
// every implementation: go-deadlock churns the full million in a few
// seconds, so it needs no smaller count. The mutexes metric shows it.
const churned = 1_000_000

// BenchmarkChurn is case (i). An op is a whole churn of a million mutexes,
// so run it with -benchtime 1x; the live-MiB metric is the point.
//
// lockorder is reset first, so that each run measures what one churn adds
// to a clean state, as in a program that churns once, even with -count.
// go-deadlock cannot be reset: its order map keeps what earlier runs in
// the process left, so its live-MiB is only meaningful for the first run
// of a process (cmd/report runs one process per count).
func BenchmarkChurn(b *testing.B) {
	run(b, workload{
		func(b *testing.B) { syncimpl.Churn(b, churned) },
		func(b *testing.B) {
			lockorder.Reset()
			lockorderimpl.Churn(b, churned)
		},
		func(b *testing.B) { deadlockimpl.Churn(b, churned) },
	})
}
