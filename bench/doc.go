// Package bench measures what lockorder costs, next to sync and
// github.com/sasha-s/go-deadlock, and shows what each detector finds.
//
// The package itself holds [Detect], the detection comparison, and the
// go-deadlock set-up every benchmark process needs ([DeadlockReports]).
// The benchmarks are in its test files; cmd/report runs them and prints
// the results as a markdown table, with the targets each must meet.
//
// # Running
//
// The whole suite, as published (about 8 minutes on 2 cores; half a
// minute with -count 1 -benchtime 100ms):
//
//	go run ./bench/cmd/report                         # -count 5 -benchtime 1s
//	go run ./bench/cmd/report -count 1 -benchtime 100ms -run 'Uncontended|Nested'
//
// Run it on a quiet machine: the targets are ratios measured in one run,
// but other load still skews them.
//
// By hand:
//
//	go test -run '^$' -bench . -benchmem ./bench
//	go test -run '^$' -bench PerGoroutine -benchmem -cpu 1,2 ./bench
//	go test -run '^$' -bench 'Churn|GraphScale|Striped|CacheNodes' -benchmem -benchtime 1x ./bench
//	go test -run '^$' -bench . -benchmem -tags syncwatch_off ./bench
//
// Benchmarks never run under plain go test; the package's tests are quick.
//
// # Implementations
//
// Every case runs as sub-benchmarks named impl=NAME:
//
//   - impl=sync: sync.Mutex and sync.RWMutex, the baseline.
//   - impl=off, impl=trace, impl=check: lockorder.Mutex and RWMutex with the
//     mode set by lockorder.Configure before the benchmark (and restored
//     after it).
//   - impl=deadlock: go-deadlock with its default options, except that a
//     potential deadlock is counted instead of ending the process and its
//     text is discarded (see [DeadlockReports]).
//   - impl=off-tag: lockorder built with -tags syncwatch_off, which compiles
//     the checks away. That build runs only impl=sync and impl=off-tag.
//
// Each case is written once (internal/impls) and compiled against each
// implementation's types, so every implementation runs the same code with
// direct calls. A sub-benchmark fails if a detector reports anything during
// it: the workloads contain no lock-order bug.
//
// # Cases
//
//   - (a) BenchmarkUncontended: one Lock/Unlock pair on an unshared mutex.
//   - (b) BenchmarkNestedPair: lock A, lock B, unlock B, unlock A.
//   - (c) BenchmarkNested4: four locks in order, released in reverse.
//   - (d) BenchmarkRLock: one RLock/RUnlock pair.
//   - (e) BenchmarkSharedParallel: b.RunParallel, all goroutines on one
//     mutex. Contention dominates: this is the cost of the slow path.
//   - (e+) BenchmarkRLockParallel, an extra case: b.RunParallel, four
//     goroutines per CPU read-locking one RWMutex. Readers never wait for
//     each other, so an RLock fast path that fails while other readers hold
//     the lock shows up here.
//   - (f) BenchmarkPerGoroutine: b.RunParallel, one padded mutex per
//     goroutine. With -cpu 1,2, ns/op should halve: any shared state on the
//     lock path shows up as poor scaling.
//   - (g) BenchmarkHeldElsewhere: case (a) while 1000 other goroutines each
//     hold a lock. A detector's cost must not depend on other goroutines.
//   - (h) BenchmarkDeepStack: case (a) 40 frames below the benchmark.
//     Detectors that capture a stack per Lock pay for the depth.
//   - (i) BenchmarkChurn: an op creates a million mutexes, each locked
//     once while a long-lived lock is held; live-MiB is the live heap
//     growth after the churn, measured after repeated collections so that
//     cleanups have run. ns/op is per churn, ns/mutex per mutex. Run with
//     -benchtime 1x; cmd/report runs it in a fresh process per count, since
//     go-deadlock keeps what earlier runs left (lockorder is reset first).
//   - (j) BenchmarkGraphScale (lockorder only): 10,000 lock classes and
//     100,000 distinct order edges taken in random order consistent with
//     one topological order, then one edge closing a cycle. ns/edge is the
//     time per new edge, detect-us the time from the closing Lock call to
//     the handler receiving the cycle, cycle-ok is 1 when the report holds
//     the whole cycle. Run with -benchtime 1x.
//   - (k) BenchmarkStriped (lockorder only): a storage engine's shape,
//     objects of 16,384 striped zero-value locks each, every stripe first
//     locked while its object's lock is held, the objects kept alive.
//     ns/first-lock-empty and ns/first-lock-full are the time per first
//     acquisition of a stripe with the graph empty and with it holding
//     seven objects' stripes, in the same op; full/empty must stay near 1.
//     Run with -benchtime 1x.
//   - (l) BenchmarkLiveGoroutines: an op starts 100,000 goroutines that
//     are all alive at once, each locking a mutex of its own once, then
//     lets them exit. ns/goroutine is per goroutine; pause-ms bounds the
//     longest stop-the-world pause of the run (the runtime's pause
//     histograms, collections included); heap-MiB is the live heap once
//     the goroutines are gone. A detector that lists goroutines to learn
//     which exited stops the world for as long as there are goroutines.
//   - (m) BenchmarkWaitGroupGo: a million WaitGroup.Go calls of an empty
//     function (go-deadlock has no WaitGroup: its row is sync's). ns/call
//     is per call; growth is the time of the last tenth of the calls over
//     the first tenth's, 1 when the cost per call stays constant.
//   - (n) BenchmarkCacheNodes: an op makes 100,000 nodes of a cache, each
//     with a new lock of one named class (as syncwatch test names a
//     field's locks), locked under the cache's read lock (sync and check
//     only). ns/node is per node: in check mode the first acquisition of
//     a new lock costs its stack, and no new chain (RULES.md R2).
//   - (o) BenchmarkFreshGroups: a function started by WaitGroup.Go makes
//     100,000 WaitGroups, one after the other, each counting one task and
//     waited for under the function's hold of its own group (sync and
//     check only). ns/group is per group: in check mode one unwind names
//     the group and is its Wait's stack.
//
// # Detection
//
// [Detect] runs small lock-usage scenarios through lockorder and
// go-deadlock: real deadlocks (2-lock and 3-lock cycles, a cycle between
// classes over different instances, an inversion through RLocker) and safe
// patterns a detector must not report (TryLock back-off, read/read
// inversion with no writer). cmd/report prints the outcome next to the
// timings, so that "detects more" is measured, not claimed.
package bench
