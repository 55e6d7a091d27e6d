// Package rwlock is a reader/writer mutual exclusion lock with
// sync.RWMutex's algorithm (writers queue on a mutex and announce
// themselves by making the reader count negative; readers that arrive
// meanwhile wait until the writer unlocks), whose read side can be taken
// apart.
//
// sync.RWMutex's RLock and RUnlock cannot be split: once the reader count
// is changed, only sync can wait on, or wake, the runtime semaphores that
// go with it. Here the count is a field, Readers, and the waits are
// channels, so a caller can change the count inline (one atomic add, the
// whole of an uncontended RLock or RUnlock) and call [RWMutex.WaitReader]
// or [RWMutex.ReaderLeft] only when the add says a writer is involved.
// lockorder's RWMutex does that to inline its uncontended read paths.
//
// The zero value is an unlocked lock. Misuse returns false (Unlock,
// ReaderLeft) instead of failing, so that the caller can report it first.
package rwlock

import (
	"sync"
	"sync/atomic"
)

// MaxReaders is the most readers a lock can have at once.
const MaxReaders = 1 << 30

// An RWMutex is a reader/writer lock. It must not be copied after first
// use.
type RWMutex struct {
	w sync.Mutex // held by the writer that holds the lock or waits for it
	// Readers is the number of readers, less MaxReaders while a writer
	// holds the lock or waits for it. Change it only with sync/atomic, as
	// RLock and RUnlock do.
	Readers int32
	leaving atomic.Int32 // readers the waiting writer still waits for
	q       atomic.Pointer[queues]
}

// queues are where goroutines wait, made on first contention.
type queues struct {
	// readers holds one token per reader a writer's Unlock lets in. Its
	// elements have no size, so its capacity costs nothing.
	readers chan struct{}
	// writer gets a token from the last reader out, for the writer that
	// waits for the readers. One writer at a time waits.
	writer chan struct{}
}

func (rw *RWMutex) queues() *queues {
	if q := rw.q.Load(); q != nil {
		return q
	}
	q := &queues{readers: make(chan struct{}, MaxReaders), writer: make(chan struct{}, 1)}
	if rw.q.CompareAndSwap(nil, q) {
		return q
	}
	return rw.q.Load()
}

// RLock locks rw for reading.
func (rw *RWMutex) RLock() {
	if atomic.AddInt32(&rw.Readers, 1) < 0 {
		rw.WaitReader()
	}
}

// WaitReader finishes an RLock whose add to Readers left it negative: it
// blocks until the writer holding or awaiting rw unlocks it.
func (rw *RWMutex) WaitReader() { <-rw.queues().readers }

// TryRLock tries to lock rw for reading and reports whether it succeeded.
func (rw *RWMutex) TryRLock() bool {
	for {
		c := atomic.LoadInt32(&rw.Readers)
		if c < 0 {
			return false
		}
		if atomic.CompareAndSwapInt32(&rw.Readers, c, c+1) {
			return true
		}
	}
}

// RUnlock undoes one RLock. It reports false, leaving rw as it was, if rw
// was not locked for reading.
func (rw *RWMutex) RUnlock() bool {
	if r := atomic.AddInt32(&rw.Readers, -1); r < 0 {
		return rw.ReaderLeft(r)
	}
	return true
}

// ReaderLeft finishes an RUnlock whose subtraction from Readers returned
// r < 0: a writer waits, and the last reader out lets it in. It reports
// false, and undoes the subtraction, if rw was not locked for reading.
func (rw *RWMutex) ReaderLeft(r int32) bool {
	if r+1 == 0 || r+1 == -MaxReaders {
		atomic.AddInt32(&rw.Readers, 1)
		return false
	}
	if rw.leaving.Add(-1) == 0 {
		rw.queues().writer <- struct{}{}
	}
	return true
}

// Lock locks rw for writing: it waits for the writer before it, then for
// the readers in.
func (rw *RWMutex) Lock() {
	rw.w.Lock()
	r := atomic.AddInt32(&rw.Readers, -MaxReaders) + MaxReaders
	if r != 0 && rw.leaving.Add(r) != 0 {
		<-rw.queues().writer
	}
}

// TryLock tries to lock rw for writing and reports whether it succeeded.
func (rw *RWMutex) TryLock() bool {
	if !rw.w.TryLock() {
		return false
	}
	if !atomic.CompareAndSwapInt32(&rw.Readers, 0, -MaxReaders) {
		rw.w.Unlock()
		return false
	}
	return true
}

// Unlock unlocks rw for writing and lets in the readers that arrived
// meanwhile. It reports false, leaving rw as it was, if rw was not locked
// for writing.
func (rw *RWMutex) Unlock() bool {
	r := atomic.AddInt32(&rw.Readers, MaxReaders)
	if r >= MaxReaders {
		atomic.AddInt32(&rw.Readers, -MaxReaders)
		return false
	}
	if r > 0 {
		q := rw.queues()
		for range r {
			q.readers <- struct{}{}
		}
	}
	rw.w.Unlock()
	return true
}
