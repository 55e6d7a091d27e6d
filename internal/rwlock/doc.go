// Package rwlock is a reader/writer mutual exclusion lock with
// sync.RWMutex's algorithm and meaning, whose read side can be taken apart
// and whose waits can be given up.
//
// sync.RWMutex's RLock and RUnlock cannot be split: once the reader count
// is changed, only sync can wait on, or wake, the runtime semaphores that
// go with it. Here the count is a field of the lock and the waits are
// channels, so a caller can change the count inline (one atomic add, the
// whole of an uncontended RLock or RUnlock) and call the rest only when
// the add says a writer is involved. lockorder's RWMutex does that to
// inline its uncontended read paths. And a wait on a channel can be given
// up, which lockorder's LockContext and RLockContext need: a wait given up
// leaves the lock as it was.
//
// The zero value is an unlocked lock. Misuse returns false (Unlock,
// RUnlock) instead of failing, so that the caller can report it first.
//
// # Protocol
//
// The reader count (see [RWMutex.AddReader]), changed only atomically, is
// the number of readers that hold the lock or wait for it. Writers queue on
// a sync.Mutex, the writers' queue, so they wait for one another as sync's
// do. The writer at its head announces itself by adding to the count a
// large negative number, its announcement, which carries the writer's
// epoch: a 30-bit number kept in the lock (in the gate, below), moved on
// only while the writers' queue is held. So the count is negative exactly
// while a writer holds the lock or waits for readers, and the result of
// every add to it tells the reader that made it which writer it found.
//
// RLock adds 1. A result >= 0 means no writer: the reader is in. A negative
// result means writer e is there, and the reader queues behind it
// ([RWMutex.Enqueue]): if the gate, a word holding an epoch and a number of
// queued readers, still shows e, the reader adds itself to that number and
// waits for a token on the readers' channel; if the gate has moved past e,
// writer e has already let it in.
//
// RUnlock subtracts 1. A negative result means writer e waits for the
// readers that were in when it announced itself, and the reader counts
// itself out ([RWMutex.ReaderLeft]): the word leaving holds an epoch and
// how many of those readers are still in. If it still shows e, the reader
// subtracts 1 from that number and, if that brings it to 0, sends the
// writer its token; if it shows another epoch, writer e gave up, and there
// is nothing to do.
//
// The writer learns from its own add how many readers were in, n, and adds
// n to leaving (which shows its epoch and 0 or less: readers that left
// between the two adds have already counted themselves out). A result of 0
// means they have all gone; otherwise it waits for its token.
//
// Unlock subtracts the announcement. The result is the number of readers
// that came meanwhile. If there are any, the lock moves to the next epoch:
// leaving and the gate are set to it, the swap of the gate returns how many
// readers queued, and each gets a token; a reader that had counted itself
// but not yet queued finds the gate moved and goes in without one. Then
// the writers' queue is released. If no reader came, no one holds epoch e
// and it is kept: an uncontended Lock and Unlock touch nothing but the
// count and the writers' queue.
//
// Tokens are anonymous, as sync's semaphore wake-ups are: a reader may take
// a token sent for another, which then waits for the next writer's Unlock.
// One token is sent per queued reader, so every writer still waits for
// exactly as many departures as there were readers in.
//
// # Giving up
//
// A writer that gives up while readers are still in ([RWMutex.LockQueued]
// with a done channel) moves leaving from its epoch to the next one with a
// compare-and-swap, unless the number there is already 0: then the last
// reader has just let it in, and it takes its token and holds the lock.
// After the swap no reader counts itself out of writer e's wait any more;
// one that had subtracted from the count but not yet from leaving finds
// another epoch there and does nothing, so no token is sent to a writer
// that has gone and the next writer's leaving is not disturbed. Then the
// writer withdraws as Unlock does, but always moves to the next epoch:
// readers that came meanwhile get their tokens or find the gate moved, and
// readers still in leave without a writer to tell. The writers' queue is
// released last. The lock is as it would be had the writer never come.
//
// Before all that, a writer waits for the writers' queue, the sync.Mutex
// w. One that finds it taken waits beside it, in internal/ctxwait, never
// in w's own queue, whether it may give up or not: a writer that gave up
// is simply gone, and all writers keep one order, first come first
// ([Writer.LockOrCancel]).
//
// A reader that gives up ([RWMutex.RLockOrCancel]) takes its place at the
// gate back if the gate still shows its writer's epoch, then subtracts its
// 1 from the count. If the result names a later writer, that writer
// announced itself after writer e let this reader in, counted it as in,
// and waits for it: the reader counts itself out as RUnlock would. If the
// gate had already moved, a token was sent for the reader: it takes it and
// holds the lock.
//
// Epochs wrap after 2^30 moves. A reader stopped between its add to the
// count and its next step while the lock moves 2^30 times could mistake a
// later writer for its own; like MaxReaders, a limit no program reaches.
//
// # Memory model
//
// As for sync.RWMutex: the n'th call to Unlock "synchronizes before" the
// m'th call to Lock for any n < m, and for any call to RLock, there exists
// an n such that the n'th call to Unlock "synchronizes before" that call to
// RLock, and the corresponding call to RUnlock "synchronizes before" the
// n+1'th call to Lock. A successful TryLock, TryRLock, LockQueued,
// Writer.LockOrCancel or RLockOrCancel counts as a Lock or RLock; one
// that fails or gives up synchronizes with nothing. Under the race detector the lock tells the
// detector exactly these edges and hides its own atomics (see race.go).
package rwlock
