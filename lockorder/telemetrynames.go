package lockorder

// This file holds no code, only the names of lockorder's telemetry and what
// each carries. It has no build tag, like the ScopeName it sits next to:
// the names exist in both builds, and the syncwatch_off build emits nothing.

// MetricWaitDuration is the histogram of contended lock waits, in seconds
// (unit "s"), recorded in ModeTrace and ModeCheck through the meter of the
// provider set with [WithMeterProvider] (none by default: nothing is
// recorded until one is set), scope [ScopeName], version [Version].
//
// A wait is measured when it ends with the lock acquired, if Lock found
// the lock taken and a second try failed too (in ModeCheck, a short spin of
// tries), if RLock found a writer holding or waiting for it, or if
// LockContext or RLockContext found it taken: every wait that a "lock wait"
// span could describe, whether or not it reached the span threshold
// ([WithWaitThreshold]). In ModeCheck Lock tries the lock a few times,
// briefly, before it counts a wait; ModeTrace leaves the spinning to sync,
// which does it better, so it counts some very short waits that ModeCheck
// does not: compare counts within one mode. A LockContext that gives up is not
// measured (it is a wait-timeout violation when its deadline passed). An
// uncontended Lock records nothing and reads no clock. When no SDK is
// installed, or the instrument is disabled, nothing is computed beyond a
// call to the instrument's Enabled.
//
// Attributes:
//
//   - syncwatch.lock.class: the lock class (the name given to [NewMutex] or
//     [NewRWMutex]). A zero-value lock is a class of its own, named after its
//     address; its waits are recorded under its kind, "Mutex" or "RWMutex",
//     so that the attribute's cardinality is bounded by the program's class
//     names rather than by the number of locks it ever created.
//
// The bucket boundaries advised to the SDK run from 1µs to 10s.
//
// # Spans
//
// Besides this metric, lockorder emits two kinds of spans with the tracer of
// [WithTracerProvider] (none by default), scope [ScopeName]:
//
// A "lock wait" span for each contended wait that lasted at least the wait
// threshold, from the start of the wait to its end, with attributes
//
//   - syncwatch.lock.name: the lock's name ("store#2"; for a zero-value
//     lock, the code that first locked it, "db.(*DB).begin (db.go:80)#2")
//   - syncwatch.lock.class: its class ("store"; "db.(*DB).begin (db.go:80)")
//   - syncwatch.wait.duration_ns: how long the wait lasted, in nanoseconds
//
// A span named after the [Kind] for each distinct violation, with status
// Error, the error recorded as an exception event, and attributes
//
//   - syncwatch.kind: the Kind ("lock-order-cycle", ...)
//   - syncwatch.source: the reporting package ("lockorder", "barrier", ...)
//   - thread.id: the goroutine that caused or observed it
//   - syncwatch.lock.names, syncwatch.lock.classes: the locks involved
//   - syncwatch.cycle.edges: a cycle's edges, "A -> B" each
//   - syncwatch.cycle.goroutines: the goroutine that first took each edge
//   - syncwatch.holder.goroutine: the holder of the lock waited on
//   - syncwatch.wait.duration_ns: how long the wait lasted, for a wait
//     violation (wait-timeout, and the waits of other syncwatch packages)
//   - code.stacktrace: the stack, at most 4096 bytes
//   - any attributes the reporter put in [Violation].Attrs
//
// Attributes that do not apply to a violation are left out.
//
// # Profiles
//
// [WriteWaitProfile] writes a pprof profile of the contended waits seen so
// far; the runtime/pprof profiles named [HeldProfileName] and
// [WaitingProfileName] list the locks held and the lock waits in progress.
// [WriteDOT] draws the lock-order graph.
const MetricWaitDuration = "syncwatch.lock.wait.duration"

// HeldProfileName is the name of a [runtime/pprof] profile of the locks
// held right now, each with the stack where it was taken. It is registered
// when the package is initialized (not in the syncwatch_off build), so it
// appears under /debug/pprof/ when net/http/pprof is in use and can be read
// with pprof.Lookup(HeldProfileName): go tool pprof on a hung process shows
// who holds what, and where they took it.
//
// It and [WaitingProfileName] are filled only while they are turned on,
// with [WithHeldProfile] or SYNCWATCH_HELD_PROFILE=1, and in ModeCheck:
// each entry costs a stack capture and the profile's lock on every Lock
// and Unlock, which a program that is not being investigated should not
// pay. An entry appears when a Lock, RLock, TryLock, TryRLock, LockContext
// or RLockContext acquires, and goes when the hold ends: released by its
// goroutine, released on its behalf by another goroutine (for write holds;
// a read hold released by another goroutine goes when its goroutine next
// locks or unlocks). A hold whose goroutine exited without releasing it
// stays listed until another goroutine releases the lock. A runtime/pprof profile holds
// only stacks and counts: which lock is held is told by the stack's
// innermost user frame, and by the violation reports.
//
// Like every runtime/pprof profile, it is read with WriteTo: debug=0 writes
// a gzipped protocol buffer for go tool pprof, debug=1 a text listing.
const HeldProfileName = "github.com/syncwatch/syncwatch/lockorder.held"

// WaitingProfileName is the name of a [runtime/pprof] profile of the
// goroutines blocked right now on a lockorder lock they did not get during
// a short spin, each with the stack where it waits (the innermost frames
// are lockorder's own). It is filled under the same conditions as
// [HeldProfileName]; uncontended Lock calls and waits that end during the
// spin never appear in it.
const WaitingProfileName = "github.com/syncwatch/syncwatch/lockorder.waiting"
