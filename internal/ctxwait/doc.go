// Package ctxwait waits for a sync.Mutex with a way to give up: the wait
// behind lockorder's LockContext and behind internal/rwlock's writers'
// queue.
//
// sync.Mutex has no wait that can be given up, and a goroutine queued in
// its Lock on a caller's behalf takes the lock after the caller has gone.
// So a waiter here is never in sync's queue. It registers beside the lock
// and tries the lock with TryLock whenever a release rings it: in a
// [Queue] the lock keeps (internal/rwlock's writers all wait in one when
// they find the writers' queue taken, so they keep one order), or, for a
// lock with no room for one (lockorder's Mutex), in a table keyed by the
// lock's address ([Acquire]). Every release of such a lock goes through
// the Queue's HandOff and Ring, or [Unlock], while waiters are registered.
//
// A Queue is reachable only through its lock, so the runtime's
// goroutine-leak detection (Go 1.27) finds its waiters blocked for good
// when nothing but blocked goroutines can reach the lock, as it finds a
// goroutine blocked in a sync.Mutex. The table's waiters are reachable
// from the table, so it never does for them; they wait for a context,
// which its own timer or canceller keeps alive anyway.
//
// # Rules
//
//  1. Nothing holds or takes the lock for a waiter that has given up.
//     The waiter tries the lock itself, on its own goroutine; a release
//     that hands the lock over (rule 3) does so while it still holds the
//     lock, and only to a waiter that has not given up, decided under the
//     table's lock.
//  2. A waiter misses no release. It registers, then tries the lock; a
//     releaser unlocks, then looks for waiters. A releaser that checks
//     [Waiting] before it unlocks (an inlined fast path) can miss a waiter
//     that registers in between. The waiters of such locks also poll,
//     backing off up to pollMax, until a release has looked at their
//     queue while holding the lock: the holder they registered behind is
//     then gone.
//  3. A waiter does not starve. Only the first waiter of a lock is rung. A
//     waiter that was rung and is still waiting at the next release has
//     lost a race for the lock: that release hands the lock to it, unless
//     the release before was a hand-over too, so that goroutines queued in
//     sync's Lock get at least every other release.
//  4. The wait is durable for testing/synctest: a select on channels and
//     a timer the waiter made itself. Nothing here starts a goroutine.
//
// A waiter's channel belongs to the goroutine that made it, so, as with
// x/sync's semaphore, a lock waited for inside a synctest bubble must be
// released inside it.
package ctxwait
