package rwlock

// Reader is rw's read side as a lock with a non-blocking attempt: Lock is
// RLock, TryLock is TryRLock and Unlock is RUnlock, which must succeed.
type Reader RWMutex

// Lock locks for reading.
func (r *Reader) Lock() { (*RWMutex)(r).RLock() }

// TryLock tries to lock for reading.
func (r *Reader) TryLock() bool { return (*RWMutex)(r).TryRLock() }

// LockOrCancel locks for reading, or gives up when done is closed; see
// [RWMutex.RLockOrCancel].
func (r *Reader) LockOrCancel(done <-chan struct{}) bool {
	return (*RWMutex)(r).RLockOrCancel(done)
}

// Unlock unlocks for reading; it panics if rw was not locked for reading.
func (r *Reader) Unlock() {
	if !(*RWMutex)(r).RUnlock() {
		panic("rwlock: RUnlock of unlocked RWMutex")
	}
}

// Writer is rw's write side as a lock with a non-blocking attempt; its
// Unlock panics if rw was not locked for writing. Its wait has two parts:
// the writers' queue ([WriterQueue], a sync.Mutex), then the wait for the
// readers in ([RWMutex.LockQueued]). LockOrCancel can give up either.
type Writer RWMutex

// Lock locks for writing.
func (w *Writer) Lock() { (*RWMutex)(w).Lock() }

// TryLock tries to lock for writing.
func (w *Writer) TryLock() bool { return (*RWMutex)(w).TryLock() }

// Unlock unlocks for writing; it panics if rw was not locked for writing.
func (w *Writer) Unlock() {
	if !(*RWMutex)(w).Unlock() {
		panic("rwlock: Unlock of unlocked RWMutex")
	}
}

// LockOrCancel locks for writing, or gives up when done is closed and
// reports false, leaving rw as it was: it can give up either part of its
// wait. It may lock although done is closed.
func (w *Writer) LockOrCancel(done <-chan struct{}) bool {
	rw := (*RWMutex)(w)
	rw.raceQueues()
	raceDisable()
	ok := rw.lockQueueOrCancel(done)
	raceEnable()
	return ok && rw.LockQueued(done)
}

// WriterQueue is the writers' queue, where writers wait for the writer
// before them: a sync.Mutex that readers never touch. Holding it is the
// right to announce oneself, with [RWMutex.LockQueued].
type WriterQueue RWMutex

// Lock takes the queue.
func (q *WriterQueue) Lock() {
	raceDisable()
	(*RWMutex)(q).lockQueue()
	raceEnable()
}

// TryLock tries to take the queue.
func (q *WriterQueue) TryLock() bool { return (*rawQueue)(q).TryLock() }

// Unlock releases the queue, for a holder that has not announced itself.
func (q *WriterQueue) Unlock() {
	raceDisable()
	(*RWMutex)(q).releaseQueue()
	raceEnable()
}

// Admitted is a reader queued by Enqueue, as a lock with a non-blocking
// attempt: TryLock reports whether the writer has let it in, Lock waits
// until it does.
type Admitted RWMutex

// Lock waits until the writer lets the reader in.
func (a *Admitted) Lock() {
	rw := (*RWMutex)(a)
	rw.raceQueues()
	raceDisable()
	<-rw.queues().readers
	raceEnable()
}

// TryLock reports whether the writer has let the reader in, without
// waiting. A true result consumes the admission.
func (a *Admitted) TryLock() bool {
	rw := (*RWMutex)(a)
	rw.raceQueues()
	raceDisable()
	ok := false
	select {
	case <-rw.queues().readers:
		ok = true
	default:
	}
	raceEnable()
	return ok
}
