// Package lockorder provides drop-in replacements for [sync.Mutex],
// [sync.RWMutex], [sync.Once], [sync.WaitGroup] and [sync.Cond]. They find
// lock-order bugs before they deadlock, and name every deadlock and stuck
// wait when it happens.
//
// Replace sync.Mutex with lockorder.Mutex, and so on. Zero values work as
// sync's do, and every method has the name and meaning it has in sync.
// [Mutex.LockContext], [Mutex.AssertHeld] and their RWMutex counterparts
// are additions.
//
// # What it finds
//
// In [ModeCheck] lockorder records which locks each goroutine holds when
// it takes another. Two code paths that take the same locks in opposite
// orders are reported the first time both have run, at the Unlock that
// ends the second order's outer lock. They need not have run at the same
// time, and nothing need have hung:
//
//	// submit                 // reduce
//	workers.Lock()            aggregation.Lock()
//	aggregation.Lock()        workers.Lock()
//
//	lock-order-cycle: cycle of 2 locks: aggregation_lock -> worker_lock -> aggregation_lock
//
// The report has each order's goroutine and stack. Cycles of any length
// are found. So is a [Once] whose function takes a lock its caller holds,
// and a [WaitGroup.Wait] under a lock that a [WaitGroup.Go] function
// takes. Locks made by [NewMutex] or [NewRWMutex] with one name form one
// class, as in Linux's lockdep. So an inversion between two objects'
// locks is found from two other objects of the same kinds, unless the run
// shows the objects in fixed roles (a tree whose levels alternate the two
// kinds, each node locking its own lock, then its parent's: one lock met
// both orders, and no locks were ever taken both ways).
//
// Every goroutine blocked in a syncwatch wait is also in a wait-for graph.
// A cycle of goroutines blocked for good is a deadlock report, with every
// goroutine, what it waits for and who holds it. Under go test it ends
// the test binary once the runtime proves it (Go 1.27); every goroutine
// of the program blocked is reported too, but not acted on, since a timer
// may still end the waits (see [DeadlockPanic]). A wait that lasts longer
// than [WithLongWait] is a long-wait report that names the holder and what
// it is doing. Each [Kind] of [Violation] says what was found.
//
// # Modes
//
//   - [ModeCheck], the default under go test: everything above.
//   - [ModeTrace], the default elsewhere: no order graph. Long contended
//     waits become spans and a histogram, and a long wait is still
//     reported with the lock it waits for.
//   - [ModeOff]: a plain sync lock.
//
// The SYNCWATCH_MODE environment variable (off, trace or check) overrides
// the default. [Configure] with [WithMode] overrides both, at any time.
// Building with -tags syncwatch_off compiles the instrumentation away.
// Use check mode in tests, trace mode in production.
//
// # What it costs
//
// The figures are from bench/README.md, measured against sync and
// go-deadlock in one run. In ModeCheck an uncontended Lock/Unlock, a
// nested pair or an RLock/RUnlock costs 2 to 2.5 times sync's where
// sync's costs 21 ns, and 3.5 to 5.6 times where it costs 4.4 ns, with no
// allocation. go-deadlock costs 25 to 45 times more
// than check mode. In
// ModeTrace and ModeOff an uncontended Lock or Unlock is inlined into its
// caller: in ModeTrace it costs within 10% of sync's. With -tags
// syncwatch_off it is sync's own code. Only a lock sequence never seen
// before takes a global lock and captures a stack. Memory stays bounded:
// the graph forgets locks that are garbage collected, and check mode drops
// the lock records of idle goroutines after each collection, with Linux's
// membarrier system call (a stop-the-world elsewhere; SYNCWATCH_MEMBARRIER=0
// turns it off, for a seccomp filter that would kill the process for it).
//
// A binary built with -tags syncwatch_off links little more than sync
// does: lockorder's API names types of the OpenTelemetry attribute, trace
// and metric packages, and those packages and their imports are linked.
// Its wait profile is then written without gzip. The default build links
// the engine and the OpenTelemetry API in full.
//
// # What it does not find
//
// It predicts from the orders that ran: an order no test runs is not
// seen. It sees only syncwatch's locks and waits, not channels. It does
// not report what cannot deadlock, such as a cycle whose orders were all
// taken under one common lock, or one whose orders a WaitGroup, a Once or
// a barrier kept apart: workers took one, and the goroutine whose Wait
// returned took the other after. A lock a goroutine kept until it exited
// (a file locked for good on close), and that no release ever showed
// serializing anything, counts as no common lock once [ReportBlocked]
// (which lockordertest calls) has seen that goroutine gone. The same order passed on by a channel
// or a go statement is not seen, and is reported. To tell those apart it
// trusts what it saw,
// so it can miss a cycle. Read holds may pass between goroutines, writes
// made outside check mode are not seen, and an object's first write is
// taken for its initialisation until the object shows itself shared. A
// lock taken while its goroutine holds 256 others is not checked, so that
// a loop that locks and never unlocks keeps memory bounded. A
// deadlock that does happen is still reported by the wait-for graph. Each
// rule, its reason and its limit are in docs/RULES.md of the syncwatch
// repository.
//
// A wait is declared a deadlock, and acted on, only on proof that nothing
// will end it: the runtime's goroutine leak detection (Go 1.27, or 1.26
// built with GOEXPERIMENT=goroutineleakprofile). Every goroutine of the
// program blocked for two seconds is evidence, reported at once but not
// acted on, since a timer may still end it. Until then a cycle is a
// long-wait.
//
// # Testing
//
// Package lockordertest fails a test on every report: defer
// lockordertest.VerifyNone(t) in a test, or call
// lockordertest.VerifyTestMain(m) in TestMain. Under go test a deadlock
// ends the test binary with its report ([WithDeadlockAction]) instead of
// hanging until -timeout. The syncwatch command (syncwatch test ./...)
// runs a module's tests with sync's locks swapped for lockorder's,
// without an edit.
//
// # Production
//
// Reports go to the handler set with [WithHandler] (standard error by
// default), to [Violations] and, given [WithTracerProvider], to spans with
// status Error. Each distinct violation is reported once. The handler runs
// with no internal lock held and may lock lockorder mutexes.
// [WithMeterProvider] adds a histogram of lock waits. [WithFlightRecorder]
// keeps a runtime trace of the seconds before a hang. [WriteWaitProfile]
// and [WriteDOT] write the wait profile and the order graph. Package
// debughttp serves a health check and a live view of what is blocked,
// like net/http/pprof.
//
// # What Go already gives
//
// Go's mutex and block profiles show where goroutines waited, sampled and
// after the fact. The runtime detects a deadlock only when every
// goroutine is blocked, which a server never is. lockorder reports the
// inconsistent order itself, the first time both orders run, with the
// locks, goroutines and stacks involved.
//
// An order counts only under a hold the goroutine released itself: a
// Mutex unlocked by another goroutine (handed off), or never unlocked,
// orders nothing it took later. A run that deadlocks on its first try
// never unlocks: its orders are reported once the wait-for monitor has
// proved the deadlock, just before the deadlock itself.
//
// How the engine works, and the map of its package-level state, are in
// docs/ENGINE.md of the syncwatch repository.
package lockorder
