// Package staleness decides when a worker's view of shared state is too old:
// the staleness bound of a gradient ([Policy]) and the stale synchronous
// parallel clocks of a group of workers ([Clock]).
//
// It knows nothing of servers or parameters; package paramserver applies a
// [Policy] to every gradient it receives.
//
// # Staleness of a gradient
//
// A gradient is computed on some version of the parameters (its base) and
// applied when the server is at a later version (current). Its staleness
// is current-base. [Policy.Check] accepts it iff
//
//	base <= current && current-base <= MaxStaleness
//
// The bound is inclusive, as in SSP (Ho et al., NIPS 2013) and Petuum
// Bosen: with MaxStaleness 10 a gradient 10 versions old is applied and
// one 11 versions old is not. MaxStaleness 0 is synchronous.
//
// A rejected gradient gets a *[StaleError] with the figures, which matches
// [ErrTooStale], or [ErrFutureVersion] when base > current: a version no
// worker can have read, so a bug in the caller rather than a slow worker.
//
// The training-cluster incident IR-2024-0319-001 shows the two ways such a
// check goes wrong. Its check was `staleness > max + 1`, which lets 11
// through a bound of 10, and it only logged: gradients 15, 12 and 18
// versions old were applied. Check has no off-by-one and returns an error
// the caller cannot mistake for success.
//
// # Clocks
//
// [Clock] keeps one iteration counter per worker. [Clock.Advance] says the
// worker finished an iteration and returns when it may start the next:
// when its new clock is at most maxSkew ahead of the slowest worker still
// taking part. maxSkew 0 is bulk synchronous parallel.
//
// Every wait is bounded, by the context and by [WithMaxWait] (default
// [DefaultMaxWait]); there is no way to wait forever. A wait that times
// out returns a *[WaitError] naming the workers that held it back, slowest
// first, and is reported to lockorder as a [KindClockWaitTimeout]
// violation whose Detail says what each of those workers' goroutines is
// blocked on, if it is in a syncwatch wait: "worker 7 (clock 3, goroutine
// 812) is waiting for lock aggregation_lock#1, held by goroutine 77". This
// is what the all-reduce coordinator of the incident lacked ("barrier
// never reached, 1 worker missing", without saying which or why).
//
// A Clock is a read gate, not a collective: the worker's clock stays
// advanced when its wait fails, and no other worker is affected. A worker
// that finishes, or that a supervisor declares dead, calls [Clock.Leave]
// so that it no longer holds the others back; its later Advance returns a
// *[LeftError] (matching [ErrLeft]) rather than panicking, since a worker
// declared dead by someone else may still be running.
//
// While an Advance waits it is registered with syncwatch's waits registry
// (kind "clock"), so that other syncwatch reports can say a goroutine is
// blocked on a clock.
//
// # Errors and panics
//
// Programmer errors panic with the prefix "staleness: ": NewClock with
// fewer than one worker, a worker index out of range, a nil context, a
// non-positive max wait. Runtime conditions are errors: *[StaleError],
// *[WaitError] and *[LeftError], each matching a sentinel through
// errors.Is and giving an ErrorType for telemetry.
//
// # Cost
//
// [Policy.Check] is a comparison and allocates only the error it returns.
// [Clock.Advance] takes one lockorder mutex (checked for lock order under
// go test); it costs O(workers) only when the advancing worker was the
// slowest, and allocates only when it has to wait.
package staleness
