package bench_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/bench/internal/impls/deadlockimpl"
	"github.com/syncwatch/syncwatch/bench/internal/impls/lockorderimpl"
	"github.com/syncwatch/syncwatch/bench/internal/impls/syncimpl"
	"github.com/syncwatch/syncwatch/lockorder"
)

// liveGoroutines is how many goroutines case (l) keeps alive at once.
const liveGoroutines = 100_000

// BenchmarkLiveGoroutines is case (l): many goroutines alive at once, each
// locking once. Run it with -benchtime 1x. lockorder is reset first, as in
// case (i), so that its heap-MiB is what the run leaves.
func BenchmarkLiveGoroutines(b *testing.B) {
	run(b, workload{
		func(b *testing.B) { syncimpl.LiveGoroutines(b, liveGoroutines) },
		func(b *testing.B) {
			lockorder.Reset()
			lockorderimpl.LiveGoroutines(b, liveGoroutines)
		},
		func(b *testing.B) { deadlockimpl.LiveGoroutines(b, liveGoroutines) },
	})
}

// waitGroupCalls is how many WaitGroup.Go calls an op of case (m) makes.
const waitGroupCalls = 1_000_000

// BenchmarkWaitGroupGo is case (m): a million WaitGroup.Go calls. Run it
// with -benchtime 1x. go-deadlock has no WaitGroup: its row is sync's.
func BenchmarkWaitGroupGo(b *testing.B) {
	run(b, workload{
		func(b *testing.B) { syncimpl.WaitGroupGo(b, waitGroupCalls) },
		func(b *testing.B) {
			lockorder.Reset()
			lockorderimpl.WaitGroupGo(b, waitGroupCalls)
		},
		func(b *testing.B) { deadlockimpl.WaitGroupGo(b, waitGroupCalls) },
	})
}
