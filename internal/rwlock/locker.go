package rwlock

// Reader is rw's read side as a lock with a non-blocking attempt: Lock is
// RLock, TryLock is TryRLock and Unlock is RUnlock, which must succeed.
type Reader RWMutex

// Lock locks for reading.
func (r *Reader) Lock() { (*RWMutex)(r).RLock() }

// TryLock tries to lock for reading.
func (r *Reader) TryLock() bool { return (*RWMutex)(r).TryRLock() }

// Unlock unlocks for reading; it panics if rw was not locked for reading.
func (r *Reader) Unlock() {
	if !(*RWMutex)(r).RUnlock() {
		panic("rwlock: RUnlock of unlocked RWMutex")
	}
}

// Writer is rw's write side as a lock with a non-blocking attempt; its
// Unlock panics if rw was not locked for writing.
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

// Admitted is a reader already counted by an add to Readers that returned
// a negative count, as a lock with a non-blocking attempt: TryLock reports
// whether the writer has let it in, Lock waits until it does.
type Admitted RWMutex

// Lock waits until the writer lets the reader in.
func (a *Admitted) Lock() { (*RWMutex)(a).WaitReader() }

// TryLock reports whether the writer has let the reader in, without
// waiting. A true result consumes the admission.
func (a *Admitted) TryLock() bool {
	(*RWMutex)(a).raceQueues()
	raceDisable()
	ok := false
	select {
	case <-(*RWMutex)(a).queues().readers:
		ok = true
	default:
	}
	raceEnable()
	return ok
}
