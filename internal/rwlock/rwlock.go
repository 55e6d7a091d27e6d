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
	"unsafe"
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

// The addresses the race detector's annotations use (see race.go): one
// for "a writer unlocked" (readers and the next writer acquire it), one
// for "a reader unlocked" (the next writer acquires it).
func (rw *RWMutex) writerDone() unsafe.Pointer { return unsafe.Pointer(&rw.q) }
func (rw *RWMutex) readerDone() unsafe.Pointer { return unsafe.Pointer(&rw.leaving) }

// raceQueues makes rw's queues before a stretch the race detector does not
// see (raceDisable), so that it sees them published: under the detector,
// code that uses the queues calls it first.
func (rw *RWMutex) raceQueues() {
	if RaceEnabled {
		rw.queues()
	}
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
	if rw.AddReader(1) < 0 {
		rw.WaitReader()
	}
	rw.ReaderIn()
}

// AddReader adds delta (1 or -1) to Readers and returns the result: the
// first step of RLock and RUnlock. Under the race detector it must be used
// instead of an atomic add of one's own, with ReaderIn after an RLock and
// ReaderOut before an RUnlock.
func (rw *RWMutex) AddReader(delta int32) int32 {
	raceDisable()
	r := atomic.AddInt32(&rw.Readers, delta)
	raceEnable()
	return r
}

// ReaderIn tells the race detector that a reader holds rw: it comes after
// the writer before it. It does nothing without the race detector.
func (rw *RWMutex) ReaderIn() { raceAcquire(rw.writerDone()) }

// ReaderOut tells the race detector that a reader is about to let go of
// rw: the next writer comes after it. It does nothing without the race
// detector.
func (rw *RWMutex) ReaderOut() { raceReleaseMerge(rw.readerDone()) }

// WaitReader finishes an RLock whose add to Readers left it negative: it
// blocks until the writer holding or awaiting rw unlocks it.
func (rw *RWMutex) WaitReader() {
	rw.raceQueues()
	raceDisable()
	<-rw.queues().readers
	raceEnable()
}

// AbandonReader finishes, for a reader that gave up, an RLock whose add
// to Readers left it negative: it waits until the writer lets the reader
// in, then unlocks. Run it in a goroutine of its own.
func (rw *RWMutex) AbandonReader() {
	rw.WaitReader()
	rw.ReaderIn()
	rw.RUnlock()
}

// TryRLock tries to lock rw for reading and reports whether it succeeded.
func (rw *RWMutex) TryRLock() bool {
	for {
		raceDisable()
		c := atomic.LoadInt32(&rw.Readers)
		raceEnable()
		if c < 0 {
			return false
		}
		raceDisable()
		ok := atomic.CompareAndSwapInt32(&rw.Readers, c, c+1)
		raceEnable()
		if ok {
			rw.ReaderIn()
			return true
		}
	}
}

// RUnlock undoes one RLock. It reports false, leaving rw as it was, if rw
// was not locked for reading.
func (rw *RWMutex) RUnlock() bool {
	rw.ReaderOut()
	if r := rw.AddReader(-1); r < 0 {
		return rw.ReaderLeft(r)
	}
	return true
}

// ReaderLeft finishes an RUnlock whose subtraction from Readers returned
// r < 0: a writer waits, and the last reader out lets it in. It reports
// false, and undoes the subtraction, if rw was not locked for reading.
func (rw *RWMutex) ReaderLeft(r int32) bool {
	rw.raceQueues()
	raceDisable()
	ok := r+1 != 0 && r+1 != -MaxReaders
	if !ok {
		atomic.AddInt32(&rw.Readers, 1)
	} else if rw.leaving.Add(-1) == 0 {
		rw.queues().writer <- struct{}{}
	}
	raceEnable()
	return ok
}

// Lock locks rw for writing: it waits for the writer before it, then for
// the readers in.
func (rw *RWMutex) Lock() {
	rw.raceQueues()
	raceDisable()
	rw.w.Lock()
	r := atomic.AddInt32(&rw.Readers, -MaxReaders) + MaxReaders
	if r != 0 && rw.leaving.Add(r) != 0 {
		<-rw.queues().writer
	}
	raceEnable()
	rw.writerIn()
}

// writerIn tells the race detector that a writer holds rw: it comes after
// the writer and the readers before it.
func (rw *RWMutex) writerIn() {
	raceAcquire(rw.writerDone())
	raceAcquire(rw.readerDone())
}

// TryLock tries to lock rw for writing and reports whether it succeeded.
func (rw *RWMutex) TryLock() bool {
	raceDisable()
	ok := rw.w.TryLock()
	if ok && !atomic.CompareAndSwapInt32(&rw.Readers, 0, -MaxReaders) {
		rw.w.Unlock()
		ok = false
	}
	raceEnable()
	if ok {
		rw.writerIn()
	}
	return ok
}

// Unlock unlocks rw for writing and lets in the readers that arrived
// meanwhile. It reports false, leaving rw as it was, if rw was not locked
// for writing.
func (rw *RWMutex) Unlock() bool {
	rw.raceQueues()
	raceRelease(rw.writerDone())
	raceDisable()
	r := atomic.AddInt32(&rw.Readers, MaxReaders)
	ok := r < MaxReaders
	if !ok {
		atomic.AddInt32(&rw.Readers, -MaxReaders)
	} else {
		if r > 0 {
			q := rw.queues()
			for range r {
				q.readers <- struct{}{}
			}
		}
		rw.w.Unlock()
	}
	raceEnable()
	return ok
}
