package bench_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/bench/internal/impls/deadlockimpl"
	"github.com/syncwatch/syncwatch/bench/internal/impls/lockorderimpl"
	"github.com/syncwatch/syncwatch/bench/internal/impls/syncimpl"
)

// The micro-benchmarks, cases (a) to (h); see doc.go for what each measures.

func BenchmarkUncontended(b *testing.B) {
	run(b, workload{syncimpl.Uncontended, lockorderimpl.Uncontended, deadlockimpl.Uncontended})
}

func BenchmarkNestedPair(b *testing.B) {
	run(b, workload{syncimpl.NestedPair, lockorderimpl.NestedPair, deadlockimpl.NestedPair})
}

func BenchmarkNested4(b *testing.B) {
	run(b, workload{syncimpl.Nested4, lockorderimpl.Nested4, deadlockimpl.Nested4})
}

func BenchmarkRLock(b *testing.B) {
	run(b, workload{syncimpl.RLock, lockorderimpl.RLock, deadlockimpl.RLock})
}

func BenchmarkSharedParallel(b *testing.B) {
	run(b, workload{syncimpl.SharedParallel, lockorderimpl.SharedParallel, deadlockimpl.SharedParallel})
}

func BenchmarkRLockParallel(b *testing.B) {
	run(b, workload{syncimpl.RLockParallel, lockorderimpl.RLockParallel, deadlockimpl.RLockParallel})
}

func BenchmarkPerGoroutine(b *testing.B) {
	run(b, workload{syncimpl.PerGoroutine, lockorderimpl.PerGoroutine, deadlockimpl.PerGoroutine})
}

// heldElsewhere is how many locks other goroutines hold in case (g).
const heldElsewhere = 1000

func BenchmarkHeldElsewhere(b *testing.B) {
	run(b, workload{
		func(b *testing.B) { syncimpl.HeldElsewhere(b, heldElsewhere) },
		func(b *testing.B) { lockorderimpl.HeldElsewhere(b, heldElsewhere) },
		func(b *testing.B) { deadlockimpl.HeldElsewhere(b, heldElsewhere) },
	})
}

// stackDepth is how many frames deep case (h) takes its lock.
const stackDepth = 40

func BenchmarkDeepStack(b *testing.B) {
	run(b, workload{
		func(b *testing.B) { syncimpl.DeepStack(b, stackDepth) },
		func(b *testing.B) { lockorderimpl.DeepStack(b, stackDepth) },
		func(b *testing.B) { deadlockimpl.DeepStack(b, stackDepth) },
	})
}
