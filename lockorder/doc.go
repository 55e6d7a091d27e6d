// Package lockorder provides drop-in replacements for [sync.Mutex],
// [sync.RWMutex], [sync.Once], [sync.WaitGroup] and [sync.Cond] that find
// lock-order bugs before they deadlock, and name every deadlock and stuck
// wait the moment it happens.
//
// Replace sync.Mutex with lockorder.Mutex, sync.RWMutex with
// lockorder.RWMutex, and so on. Zero values work as sync's do and every
// method has the name and meaning it has in sync; [Mutex.LockContext],
// [Mutex.AssertHeld] and their RWMutex counterparts are additions.
//
// # What it finds
//
// In [ModeCheck] lockorder records, for every goroutine, which locks it holds
// when it takes another. Each "B taken while A is held" is an edge of a
// process-wide lock-order graph, B taken for reading and B taken for
// writing two edges, each with what was seen of its own acquisitions. A
// cycle in that graph is a possible deadlock, and it is reported the first
// time its closing edge is seen, before the goroutine blocks, even if the
// two orders never overlapped in time and nothing ever deadlocked. Cycles
// of any length are found.
//
// An edge from a read hold, "Y taken while X is read-held", is the
// exception. sync lets one goroutine RUnlock what another RLocked, so the
// hold may have been handed over (a read transaction begun in one goroutine
// and ended in another), and then the edge is no order the code keeps. It
// counts once the goroutine releases its last read hold of X itself, with
// no read hold of X released meanwhile by a goroutine that did not hold it;
// it is dropped if one was (by any goroutine: a hand-off elsewhere, or an
// ordinary reader whose hold looked stale after one, drops the waiting
// edges from X of every goroutine; a missed cycle, never a false one). A
// cycle through it is reported then, at the RUnlock, with the stack of the
// acquisition of Y, or when its last other edge is seen, whichever comes
// second. If the goroutine hangs at Y instead, the wait-for graph reports
// the deadlock after its grace period (see below). An edge waits once
// however many lock chains it is seen in (a loop that begins read
// transactions, handing each off, and takes the same locks under a new
// stack of holds each time). A goroutine keeps at most 64 distinct edges
// waiting; past that, the oldest are dropped to make room (again a
// missed cycle, never a false one; seen again, an edge waits again). A
// goroutine that exits still read-holding X never proves the hold its own:
// its edges from X are not counted, and the lock left held is reported as
// held-by-exited-goroutine when lockordertest checks at exit.
//
// Two limits follow from sync's read holds being anonymous. A goroutine
// that both hands read holds of X out and ends holds of X handed to it
// (a pool of workers beginning and ending each other's read
// transactions) can release a received hold while its own is still out:
// that release passes for the proof, and a cycle through the hold handed
// out can be reported. And after a hand-off, a reader whose hold overlaps
// a stale one can keep dropping the waiting edges of readers after it, so
// while readers of X overlap, cycles through X's read holds can go
// unreported; the wait-for graph still reports any that really hangs.
//
// A [Violation] has a [Kind]:
//
//   - lock-order-cycle: the cycle's edges, each with the goroutine and
//     the stack where it was seen (the first time, or the time it could
//     first block: with fewer locks around it), and a table showing how
//     goroutines following the edges at once deadlock.
//   - recursive-lock: a goroutine locks what it already holds for
//     writing, and is blocked for good. It blocks as sync would; since
//     any goroutine may Unlock a Mutex (a completion signal, a hand-off),
//     it is reported only on evidence that nobody will (see below). A
//     LockContext over such a hold can only end by giving up.
//   - recursive-rlock: a goroutine read-locks an RWMutex it already
//     read-holds. sync forbids it: it deadlocks as soon as a writer queues.
//     sync also lets one goroutine RUnlock what another RLocked, so the
//     first hold may have been handed over. The report waits on the
//     goroutine's own count of read holds of the lock: its RLocks add one,
//     its RUnlocks take one away (an RUnlock counts for the goroutine that
//     calls it; another goroutine's release of a hold it handed over never
//     counts for it). The report is made, with the stack of the second
//     RLock, once the count has fallen two below where it was just before
//     the second RLock: the goroutine then released itself the new hold
//     and one it had before, so it held two of its own at once. It is
//     never made if the goroutine does not release them (it exits holding
//     them: handed over or leaked; a lock left held at exit is reported
//     as held-by-exited-goroutine by lockordertest's check). If a writer
//     queues in between, the second RLock blocks, and the deadlock is
//     reported (see below); an RLockContext that blocks behind the writer
//     and gives up is reported once the goroutine releases the earlier
//     hold itself. A goroutine keeps at most 8 such reports waiting. The
//     count assumes a goroutine releases only holds it took: one that
//     both hands read holds of a lock over and ends others' holds of it
//     could have the second kind counted as its own.
//   - copied-lock: a goroutine locks a mutex that is a copy of one it holds
//     (or the original of a copy it holds), made after NewMutex or first
//     use: the copy shared the original's identity, so this looked like a
//     recursive lock. The copy gets an identity of its own, and checking
//     goes on. go vet's copylocks check finds where the copy is made.
//   - bad-unlock: Unlock or RUnlock of a lock that is not locked, reported
//     with its stack just before sync's own fatal error.
//   - wait-timeout: a [Mutex.LockContext] gave up at its deadline; the
//     report names the goroutine holding the lock and what it waits for
//     (and where it is, when a goroutine dump was taken recently).
//   - not-held: [Mutex.AssertHeld] was called without the lock held.
//   - deadlock, long-wait, held-by-exited-goroutine, blocked-at-exit: see
//     below.
//
// [Once] and [WaitGroup] are nodes of the order graph too: Once.Do called
// while holding L, where the Once's function takes L, is a cycle, and so is
// WaitGroup.Wait under a lock that a function started by [WaitGroup.Go]
// takes.
//
// # When it actually hangs
//
// Every goroutine blocked in a syncwatch wait (Lock, RLock, the Context
// variants, Once.Do waiting for another goroutine's function,
// WaitGroup.Wait, Cond.Wait, a barrier's Await, a clock's Advance, a
// parameter server's Watch) is registered, once it is about to block, in
// one wait-for graph, with what it waits for and who can release it: a
// lock's writer or readers, the goroutine running a Once's function, the
// goroutines started by WaitGroup.Go that have not returned, a barrier's
// missing ranks. A monitor looks at the graph while anything waits (and is
// no goroutine at all otherwise). It reports:
//
//   - deadlock: goroutines blocked for good, in a cycle each waiting for
//     the next, or (where the runtime proves it) behind one another: a
//     lock whose holder waits on a channel nobody can send on, a Cond
//     nobody can signal. A goroutine waiting for a lock it holds is a
//     recursive-lock. The report lists every goroutine, what it waits
//     for, who holds it, which locks each holds, each one's stack, and
//     the proof. Any goroutine may unlock a Mutex, so a verdict needs
//     evidence that none will (docs/RULES.md, W1, W2): the runtime's leak
//     detection (Go 1.27; Go 1.26 built with
//     GOEXPERIMENT=goroutineleakprofile), which proves a goroutine blocked
//     on something no running goroutine can reach; or every goroutine of
//     the program blocked, in a channel, select, sync or I/O wait, for two
//     seconds on end. Until then a cycle is a long-wait that names it.
//     A cycle through a wait that gives up by itself (a timeout, a
//     deadline) is left to that wait. What happens next is
//     [WithDeadlockAction]: under go test the default, [DeadlockPanic],
//     ends the test binary with the report, so go test fails in seconds
//     instead of at -timeout; elsewhere, [DeadlockReport] reports and
//     leaves the goroutines blocked, as sync would, and the runtime ends a
//     program whose goroutines are all asleep as it would with sync: the
//     monitor arms no timer once nothing can change (W5). Fix: take the
//     locks in one order everywhere.
//   - long-wait: a wait longer than [WithLongWait] (5s by default in
//     ModeCheck) without progress, once per wait, with the likely cycle
//     or exited holder it is stuck behind, if any, not proven: a lock that keeps
//     changing hands meanwhile is contended, not stuck, and its waiters
//     count from its last hand-off. With the holder and what the runtime
//     says it is doing now (chan receive, select, IO wait, sleep, running)
//     and where. It names the commonest mixed deadlock of real Go code: a lock
//     whose holder is blocked on a channel.
//   - held-by-exited-goroutine: a goroutine waits, blocked for good (the
//     same evidence as a deadlock), for a lock whose holder has exited
//     without unlocking it (an Unlock lost on an
//     early return, or in a callback that never ran). The report says
//     where the lock was first taken, recorded once per lock; with the
//     held profile on ([WithHeldProfile]) it says where the holder took
//     it: that costs a stack capture per hold, too much to pay on every
//     Lock by default. Fix: defer the Unlock.
//   - blocked-at-exit: when lockordertest checks (VerifyNone,
//     VerifyTestMain), after waiting for goroutines still running to finish
//     or block, a goroutine still blocked in a syncwatch wait that only
//     another goroutine could end, with why; a Cond.Wait, whose goroutine
//     may be idle by design, is not reported. Locks still held by a
//     goroutine that has exited are reported then as
//     held-by-exited-goroutine: Expected (shown, not failing) when no
//     goroutine waits for the lock. See [ReportBlocked].
//
// Cond waits are idle, never long by themselves: a consumer waits as long
// as its producer is quiet. Waits are timed on the runtime's real clock,
// also in a testing/synctest bubble, whose fake clock makes no wait long;
// the monitor runs outside any bubble, so a deadlock inside one (sync's
// lock waits are not durable there: the bubble never looks idle) is still
// reported.
//
// In ModeTrace lock waits that reach the slow path are registered too,
// without the holder (ModeTrace tracks no holders: that would cost a store
// on every uncontended Lock), so a barrier's account of a missing rank and
// a long-wait report still name the lock waited for. Looking at the graph
// costs nothing while nothing waits, and the goroutine dumps that tell what
// a holder is doing (each stops the world) are taken at most once a second,
// and only for a report: a wait that gives up never takes one.
//
// It does not report what cannot deadlock: a Mutex unlocked by another
// goroutine than the one that locked it (legal in Go), a TryLock (it
// cannot block, so it adds no edge into the lock, though the lock is a
// predecessor of what is taken after it), a cycle every edge of which was
// taken while one common lock was held for writing (a gate lock), a cycle of
// read acquisitions of locks that have no writers, and consistent nesting
// however deep. A read acquisition of Y blocks only behind a writer of Y
// that holds it or waits for it. Where a cycle goes on from Y through an
// edge taken while Y was read-held (never write-held), no writer holds Y,
// so the read edge into Y counts as taken under Y's writers' gate too: the
// locks held for writing at every write of Y so far that could wait (a
// TryLock never waits, and is left out). If every writer of Y holds G, and
// any one edge of the cycle was taken holding G for writing (around it, or
// as the lock it was taken from), no writer of Y can wait while the cycle
// forms: it would be that edge's goroutine, which waits for another lock.
// An edge that may write Y itself does not count. Where the shortest cycle
// is held back so, longer ones are looked for within a bound; past it, the
// shortest is reported. Likewise a cycle two of whose edges were taken
// holding one lock for writing (around them, or as the lock they were
// taken from) cannot deadlock: two goroutines cannot both hold it, so
// bbolt's Close, holding the writer lock around the meta and mmap locks,
// forms no cycle with transactions that take the writer lock first.
// Where the cycle goes on from a write hold of Y,
// the reader may wait for that holder, and the gate does not count. A
// later write of Y without G opens the gate, and the cycles it held back
// are reported then. A lock released by another goroutine than its
// holder (a Mutex handed off) is no longer held by its taker, in the
// gates of what that goroutine takes next as elsewhere; the limits: one
// handed off while its taker waits for another lock counts as held during
// that wait, and a copy of a lock made after its first use is the same
// lock to these rules (go vet's copylocks check reports such copies). Writes are not
// seen outside ModeCheck, so leaving it forgets the gates, as Reset does,
// and the lock sequences cached under them: back in ModeCheck, each gate
// is learnt afresh from the writes seen, and reports come from those.
//
// A lock's first write, when nothing else is held, is often the object's
// initialisation: a constructor, or a database's Open mapping its file
// under the mmap lock before the handle is shared. Counted as a write
// made with nothing held, it empties the writers' gate, and cycles that
// cannot deadlock are reported. So in a process that has been in
// ModeCheck since it started (the default under go test, or
// SYNCWATCH_MODE=check) and never left it, so that every acquisition was
// seen, a lock's first acquisition, if it is a write made with nothing
// else held, is taken for its initialisation: it does not count as a
// write of the lock's class, neither giving the class writers nor
// narrowing its writers' gate, until something seen shows the lock
// shared when that write was made. Then it counts, as a write made with
// nothing held, and the cycles it held back are reported at once. The
// evidence: while the write holds the lock, another goroutine tries to
// take it (a failed TryLock included) or releases it, the write itself
// has to wait, or its goroutine takes another lock under it (then it is a
// source of order edges: "Y, then X" with "X, then a read of Y" elsewhere
// is reported); at any time after, a goroutine that was there when the
// write was made takes the lock, tries to, or releases a hold of it.
// "There" means it had taken a lock in ModeCheck before the write: a
// goroutine started before it that first locks after it passes for a
// later one. The writer itself, and goroutines that first lock after the
// write (those a test, or the code that opened the database, starts
// next), are no evidence: they may have been given the lock by the
// writer once it was written. Reset forgets writes, not that a lock was
// used: a lock is initialised once. Once the process is configured into
// ModeCheck from another mode, or leaves it, a lock's first write seen
// may come long after the lock was shared, its readers unseen: from then
// on first writes count as any other (a write exempted before that still
// waits for its evidence).
//
// The limit: a lock published before its first write, written first
// uncontended and with nothing taken under it, whose readers all start
// after that write and then form a read cycle (a lazily filled cache read
// in two orders, say), is not predicted to deadlock: in another
// interleaving that write could have queued behind one reader with the
// other queued behind it. A deadlock that happens is still caught, by the
// wait-for graph, when it happens (and a write that waits in it counts
// then). Linux's lockdep has no such rule (init
// paths are annotated there); this one goes by evidence, and counts the
// write once the lock shows itself shared.
//
// # Lock classes
//
// Edges are recorded between lock classes, as Linux's lockdep does. All
// mutexes created by [NewMutex] or [NewRWMutex] with the same name form one
// class, so an inversion between store#1/replica#1 in one place and
// replica#2/store#2 in another is found although no single pair of
// instances was ever inverted; [Mutex.SetClass] does the same for a mutex
// held by value. Two locks of the same class taken together are ordered by
// instance, so a canonical order over many instances (shards, accounts
// sorted by id) is fine and taking two of them in both orders is reported.
//
// A zero-value mutex is a class of its own, named after the code that first
// locks it: "store.(*DB).beginTx (db.go:801)#2" is the second mutex first
// locked there, and "store.(*DB).beginTx (db.go:801)" its class name in
// reports, spans, [WriteDOT] and the wait profile. (A Once, WaitGroup or
// Cond is named the same way, after its type: "Once config.load
// (config.go:12)#1".) The place is found once per mutex, from a few frames
// of the caller's stack at its first Lock. One cycle in the code is one
// report: the same cycle between the fields of four objects is reported
// once, with [Violation.Instances] 4, whichever function first locked
// each object's fields and whichever tests reached it
// ([Violation.Tests]). Its message names a zero-value lock by the code
// that took it in the cycle ("store.(*DB).put (db.go:12)", with the
// caller when a helper took them all), without instance number, so that
// it reads the same on every object and in every run.
//
// # Modes and how to turn it on and off
//
//   - [ModeCheck], the default under go test (testing.Testing): everything
//     above.
//   - [ModeTrace], the default elsewhere: no graph; contended waits longer
//     than a threshold become "lock wait" spans (with the provider given to
//     [WithTracerProvider]). For production.
//   - [ModeOff]: a sync lock. As in ModeTrace, an uncontended Lock or Unlock
//     is inlined into its caller (see What it costs); a contended one calls
//     sync's.
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
// error), to [Violations], to lockordertest.VerifyNone, and, once a tracer
// provider is set with [WithTracerProvider], to an OpenTelemetry span with
// status Error. Each distinct violation is reported
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
// that agrees with it costs O(1). A new chain records an edge from every
// lock held to the new one, and the locks held around those edges (their
// gates) are kept once for all of them, so a lock taken for the first time
// under k others costs O(k): the first pass through n nested locks is
// O(n²), and the passes after it find their chains in the cache.
//
// In ModeOff and ModeTrace an uncontended Mutex.Lock or Mutex.Unlock is
// inlined into its caller: one atomic load that says whether the fast path
// may run, then sync's own compare-and-swap on sync's own state word. (The
// word is located by internal/syncword for the Go releases whose layout has
// been checked, and verified when the program starts; under the race
// detector, or if the check fails, every call goes through sync's methods
// instead.) An RWMutex's uncontended RLock and RUnlock are inlined too, as
// one atomic add on a reader count of its own: it runs sync.RWMutex's
// algorithm on a lock of its own (internal/rwlock), whose waits it can take
// apart. The bench directory measures all of this against sync and
// github.com/sasha-s/go-deadlock, in every mode and with -tags
// syncwatch_off; the figures, and how they were measured, are in its
// README.md.
//
// Memory stays bounded: the graph nodes of a mutex that becomes unreachable
// are dropped after garbage collection; a goroutine's lock stack is kept
// only while it holds something (idle ones are dropped after garbage
// collection or when the table fills, with one short stop-the-world per
// batch and never a goroutine dump; a goroutine started by WaitGroup.Go
// gives its up as it returns); and the chain cache and the report store
// have caps.
// A named class is freed with its last mutex, so that a name per
// connection ("conn-%d") costs only while the connection lives; in
// ModeCheck a class the graph has learnt orders for outlives its mutexes,
// for the next mutex of its name to be checked against them, up to the
// 4096 most recently emptied classes, and [Reset] frees them. Creating a
// mutex under a name that no live mutex has costs more than under one in
// use: a weak pointer and a cleanup, made once per class.
//
// # What Go already gives, and what this adds
//
// Go's mutex profile (runtime.SetMutexProfileFraction) and block profile
// show where goroutines waited, after the fact and sampled; the runtime
// detects a deadlock only when every goroutine is blocked, which a server
// never is. lockorder reports the cause, the inconsistent order, the first
// time both orders have run, whether or not they ever collided, and names
// the locks, the goroutines and the stacks involved.
// # Package state
//
// For the maintainer, everything lockorder keeps at package level, each in
// the file named:
//
//   - config.go: cfg (the configuration, replaced whole by Configure),
//     configMu (serializes Configure), modeWord (the mode, the held-profile
//     switch and an epoch, loaded once per Lock);
//   - fastpath.go: fastOff (which also counts the LockContext calls
//     waiting for a Mutex), layoutOK and readSlow, which let the inlined
//     fast paths run;
//   - engine.go: chains (the lock-free cache of lock sequences seen),
//     eng (the order graph and its nodes, under eng.mu) and handoffs (a
//     count of the write holds released by another goroutine, after
//     which a goroutine drops the holds no longer its own before it looks
//     up a chain);
//   - edges.go: readEpoch (bumped by Reset, so that the edges from read
//     holds waiting on goroutines, kept with their lock stacks, are
//     forgotten with the graph);
//   - publish.go: records and expected (the report stores) and lastID;
//   - heldprofile.go and waitprofile.go: the held, waiting and wait
//     profiles;
//   - metrics.go: the wait histogram's instruments;
//   - flightrecorder.go: flightCur, the running flight recorder (see
//     WithFlightRecorder), with the last trace file it wrote, and
//     flightLast, the files it may prune, kept for the next recorder on
//     the same directory.
//
// Per-goroutine state is internal/gls's (each goroutine's internal/held
// lock stack, with the reports and the edges from read holds that wait
// for its holds to prove its own), the wait-for graph is internal/waitfor's,
// LockContext's waits for a sync lock are internal/ctxwait's, and lock
// identities and classes are internal/class's.
package lockorder
