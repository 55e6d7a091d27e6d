// Package lockorder provides drop-in replacements for [sync.Mutex] and
// [sync.RWMutex] that find lock-order bugs before they deadlock.
//
// Replace sync.Mutex with lockorder.Mutex and sync.RWMutex with
// lockorder.RWMutex. The zero value is an unlocked mutex and every method
// has the name and meaning it has in sync; [Mutex.LockContext],
// [Mutex.AssertHeld] and their RWMutex counterparts are additions.
//
// # What it finds
//
// In [ModeCheck] lockorder records, for every goroutine, which locks it holds
// when it takes another. Each "B taken while A is held" is an edge of a
// process-wide lock-order graph. A cycle in that graph is a possible
// deadlock, and it is reported the first time its closing edge is seen,
// before the goroutine blocks, even if the two orders never overlapped in
// time and nothing ever deadlocked. Cycles of any length are found.
//
// A [Violation] has a [Kind]:
//
//   - lock-order-cycle: the cycle's edges, each with the goroutine and
//     the stack where it was first seen, and a table showing how
//     goroutines following the edges at once deadlock.
//   - recursive-lock: a goroutine locks what it already holds (it blocks
//     forever, as sync would; the report comes first).
//   - recursive-rlock: a goroutine read-locks an RWMutex it already
//     read-holds. sync forbids it: it deadlocks as soon as a writer queues.
//   - bad-unlock: Unlock or RUnlock of a lock that is not locked, reported
//     with its stack just before sync's own fatal error.
//   - wait-timeout: a [Mutex.LockContext] gave up at its deadline; the
//     report names the goroutine holding the lock and where it is now.
//   - not-held: [Mutex.AssertHeld] was called without the lock held.
//
// It does not report what cannot deadlock: a Mutex unlocked by another
// goroutine than the one that locked it (legal in Go), a TryLock (it
// cannot block, so it adds no edge into the lock, though the lock is a
// predecessor of what is taken after it), a cycle every edge of which was
// taken while one common lock was held for writing (a gate lock), a cycle of
// read acquisitions of locks that have no writers, and consistent nesting
// however deep.
//
// # Lock classes
//
// Edges are recorded between lock classes, as Linux's lockdep does. All
// mutexes created by [NewMutex] or [NewRWMutex] with the same name form one
// class, so an inversion between store#1/replica#1 in one place and
// replica#2/store#2 in another is found although no single pair of
// instances was ever inverted. A zero-value mutex is a class of its own.
// Two locks of the same class taken together are ordered by instance, so a
// canonical order over many instances (shards, accounts sorted by id) is
// fine and taking two of them in both orders is reported.
//
// # Modes and how to turn it on and off
//
//   - [ModeCheck], the default under go test (testing.Testing): everything
//     above.
//   - [ModeTrace], the default elsewhere: no graph; contended waits longer
//     than a threshold become "lock wait" spans. For production.
//   - [ModeOff]: a sync lock behind one atomic load and a function call.
//
// The SYNCWATCH_MODE environment variable (off, trace or check) overrides
// the default, and [Configure] with [WithMode] overrides both, at any time.
// Building with -tags syncwatch_off compiles the instrumentation away: the
// types keep their API and are plain locks. Mutex is a sync.Mutex; RWMutex
// runs sync.RWMutex's algorithm on the lock of its own it has in every
// mode, so that a LockContext that gives up can withdraw (a sync.RWMutex
// writer cannot).
//
// Reports go to the handler set with [WithHandler] (by default, standard
// error), to [Violations], to lockordertest.VerifyNone, and to an
// OpenTelemetry span with status Error. Each distinct violation is reported
// once; detection goes on after the first report. The handler is called on
// the goroutine that found the violation with no internal lock held: it may
// lock lockorder mutexes, and if it panics the panic reaches that
// goroutine's Lock call, which has not taken the lock.
//
// # What it costs
//
// The design follows lockdep's. Each goroutine keeps the stack of locks it
// holds and a running hash of it, the chain key. A lock sequence seen
// before costs a lookup in a lock-free hash set: no global lock, no
// allocation, no stack capture, and nothing that grows with what other
// goroutines hold. Only a new sequence takes the graph's lock, captures one
// stack and searches for a cycle, and the search keeps an incremental
// topological order (as Abseil's deadlock detector does) so a new edge
// that agrees with it costs O(1).
//
// In ModeOff and ModeTrace an uncontended Mutex.Lock or Mutex.Unlock is
// inlined into its caller and does exactly what sync's does: one
// compare-and-swap on sync's own state word. (The word is located by
// internal/syncword for the Go releases whose layout has been checked, and
// verified when the program starts; under the race detector, or if the
// check fails, every call goes through sync's methods instead.) An
// RWMutex's uncontended RLock and RUnlock are inlined too, as one atomic
// add on a reader count of its own: it runs sync.RWMutex's algorithm on a
// lock of its own (internal/rwlock), whose waits it can take apart. The bench
// directory measures all of this against sync and
// github.com/sasha-s/go-deadlock; on a 2-core machine an uncontended
// Lock/Unlock pair cost about 1.6-2.1x sync in ModeCheck (2.2-2.7x for a
// nested pair), 1.0-1.1x in ModeTrace and ModeOff (RLock/RUnlock too), and
// exactly sync with -tags syncwatch_off; go-deadlock cost 50-80x.
//
// Memory stays bounded: the graph nodes of a mutex that becomes unreachable
// are dropped after garbage collection, goroutines that exit are swept from
// the held-lock table, and the chain cache and the report store have caps.
//
// # What Go already gives, and what this adds
//
// Go's mutex profile (runtime.SetMutexProfileFraction) and block profile
// show where goroutines waited, after the fact and sampled; the runtime
// detects a deadlock only when every goroutine is blocked, which a server
// never is. lockorder reports the cause, the inconsistent order, the first
// time both orders have run, whether or not they ever collided, and names
// the locks, the goroutines and the stacks involved.
package lockorder
