package rwlock

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/ctxwait"
)

// MaxReaders is the most readers a lock can have at once.
const MaxReaders = 1 << 30

// The reader count's layout: the number of readers in the low 32 bits, and
// while a writer holds the lock or waits for readers, its announcement:
// -(writerBit | epoch<<epochShift), negative whatever the readers.
const (
	epochShift = 32
	epochMask  = 1<<30 - 1
	writerBit  = 1 << 62
)

// An RWMutex is a reader/writer lock. It must not be copied after first
// use.
type RWMutex struct {
	_ [0]atomic.Int64 // aligns readers for 64-bit atomics on 32-bit platforms
	// readers is the reader count: see the package doc and AddReader.
	readers int64
	w       sync.Mutex // the writers' queue: see lockQueue
	// leaving is epoch<<32 | uint32(n): writer epoch waits for n readers.
	leaving atomic.Uint64
	// gate is epoch<<32 | n: n readers queued behind writer epoch. Its
	// epoch is the lock's: the writer's announced, or the next one's. It
	// changes only with w held.
	gate atomic.Uint64
	q    atomic.Pointer[queues]
}

// queues are where goroutines wait, made on first contention.
type queues struct {
	// readers holds one token per queued reader a writer lets in. Its
	// elements have no size, so its capacity costs nothing.
	readers chan struct{}
	// writer gets a token from the last reader out, for the writer that
	// waits for the readers. One writer at a time waits.
	writer chan struct{}
	// writers are the writers waiting for the writers' queue.
	writers ctxwait.Queue
}

// announcement is what writer e adds to the reader count.
func announcement(e uint32) int64 { return -(writerBit | int64(e)<<epochShift) }

// split returns the number of readers in v, a value of the reader count,
// and, if v < 0, the epoch of the writer announced in it.
func split(v int64) (n int64, e uint32) {
	n = int64(uint32(v))
	return n, uint32(uint64(n-v)>>epochShift) & epochMask
}

// word packs an epoch and a count into leaving's or gate's layout.
func word(e uint32, n int32) uint64 { return uint64(e)<<32 | uint64(uint32(n)) }

// unword unpacks word.
func unword(x uint64) (e uint32, n int32) { return uint32(x >> 32), int32(uint32(x)) }

// epoch returns the lock's epoch (see gate).
func (rw *RWMutex) epoch() uint32 {
	e, _ := unword(rw.gate.Load())
	return e
}

// next is the epoch after e.
func next(e uint32) uint32 { return (e + 1) & epochMask }

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
	// Made by the goroutine of the first contention: in a testing/synctest
	// bubble, the bubble's, so that a wait on them is durable there and
	// RLockContext ends at the bubble's fake deadline (on channels of no
	// bubble the bubble's clock would never move). The limit: such a lock
	// cannot then be waited for from outside that bubble.
	q := &queues{readers: make(chan struct{}, MaxReaders), writer: make(chan struct{}, 1)}
	if rw.q.CompareAndSwap(nil, q) {
		return q
	}
	return rw.q.Load()
}

// AddReader adds delta (1 or -1) to the reader count and returns the
// result: the first step of RLock and RUnlock, and the whole of them when
// no writer is involved. A result v < 0 means a writer is, and the step
// must be finished: by Enqueue(v) and a wait (or CancelReader(v)) after an
// add of 1, by ReaderLeft(v) after an add of -1. ReaderIn must follow a
// read lock and ReaderOut precede a read unlock (they tell the race
// detector, which must not see the add itself: it would order every reader
// after every earlier one).
func (rw *RWMutex) AddReader(delta int64) int64 {
	raceDisable()
	v := atomic.AddInt64(&rw.readers, delta)
	raceEnable()
	return v
}

// Readers returns the reader count, for a caller that makes AddReader's
// add itself, with atomic.AddInt64, under AddReader's rules: lockorder's
// RWMutex does, to keep its uncontended RLock and RUnlock one inlined add.
// (A call to AddReader, inlined, costs one point more than the inliner's
// budget leaves them.) Without the race detector only: under it, such a
// caller must call AddReader.
func (rw *RWMutex) Readers() *int64 { return &rw.readers }

// ReaderIn tells the race detector that a reader holds rw: it comes after
// the writer before it. It does nothing without the race detector.
func (rw *RWMutex) ReaderIn() { raceAcquire(rw.writerDone()) }

// ReaderOut tells the race detector that a reader is about to let go of
// rw: the next writer comes after it. It does nothing without the race
// detector.
func (rw *RWMutex) ReaderOut() { raceReleaseMerge(rw.readerDone()) }

// RLock locks rw for reading.
func (rw *RWMutex) RLock() {
	if v := rw.AddReader(1); v < 0 {
		rw.WaitReader(v)
	}
	rw.ReaderIn()
}

// Enqueue queues behind the writer a reader whose add of 1 to the reader
// count returned v < 0. It reports whether the reader must wait for the
// writer to let it in (see [Admitted]); false means the writer already has.
func (rw *RWMutex) Enqueue(v int64) bool {
	_, e := split(v)
	raceDisable()
	for {
		g := rw.gate.Load()
		if ge, _ := unword(g); ge != e {
			raceEnable()
			return false
		}
		if rw.gate.CompareAndSwap(g, g+1) {
			raceEnable()
			return true
		}
	}
}

// WaitReader finishes an RLock whose add to the reader count returned
// v < 0: it blocks until the writer lets the reader in.
func (rw *RWMutex) WaitReader(v int64) {
	if rw.Enqueue(v) {
		(*Admitted)(rw).Lock()
	}
}

// TryRLock tries to lock rw for reading and reports whether it succeeded.
func (rw *RWMutex) TryRLock() bool {
	for {
		raceDisable()
		c := atomic.LoadInt64(&rw.readers)
		raceEnable()
		if c < 0 {
			return false
		}
		raceDisable()
		ok := atomic.CompareAndSwapInt64(&rw.readers, c, c+1)
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
	if v := rw.AddReader(-1); v < 0 {
		return rw.ReaderLeft(v)
	}
	return true
}

// Unheld reports whether an RUnlock whose add of -1 to the reader count
// returned v found rw not locked for reading (no reader counted).
func Unheld(v int64) bool { return uint32(v) == ^uint32(0) }

// ReaderLeft finishes an RUnlock whose add of -1 to the reader count
// returned v < 0: it counts the reader out of the waiting writer's wait,
// and the last reader out lets the writer in. It reports false, and undoes
// the add, if rw was not locked for reading.
func (rw *RWMutex) ReaderLeft(v int64) bool {
	if Unheld(v) {
		rw.AddReader(1)
		return false
	}
	rw.leave(v)
	return true
}

// leave counts a reader out of the wait of the writer announced in v.
func (rw *RWMutex) leave(v int64) {
	_, e := split(v)
	rw.raceQueues()
	raceDisable()
	for {
		l := rw.leaving.Load()
		le, n := unword(l)
		if le != e {
			break // writer e gave up: no one waits for this reader
		}
		if rw.leaving.CompareAndSwap(l, word(e, n-1)) {
			if n == 1 {
				rw.queues().writer <- struct{}{}
			}
			break
		}
	}
	raceEnable()
}

// Lock locks rw for writing: it waits for the writer before it, then for
// the readers in.
func (rw *RWMutex) Lock() {
	rw.raceQueues()
	raceDisable()
	rw.lockQueue()
	e := rw.epoch()
	a := announcement(e)
	if n := int32(atomic.AddInt64(&rw.readers, a) - a); n != 0 {
		rw.awaitReaders(e, n)
	}
	raceEnable()
	rw.writerIn()
}

// awaitReaders waits, for writer e, until the n readers in when it
// announced itself have left. It has no select: see lockQueue.
func (rw *RWMutex) awaitReaders(e uint32, n int32) {
	if !rw.expectReaders(e, n) {
		<-rw.queues().writer
	}
}

// expectReaders adds the n readers in when writer e announced itself to
// the count of those who have left since, and reports whether they have
// all left.
func (rw *RWMutex) expectReaders(e uint32, n int32) bool {
	for {
		l := rw.leaving.Load()
		_, left := unword(l) // <= 0: readers already gone
		if rw.leaving.CompareAndSwap(l, word(e, left+n)) {
			return left+n == 0
		}
	}
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
	if ok && !atomic.CompareAndSwapInt64(&rw.readers, 0, announcement(rw.epoch())) {
		rw.releaseQueue()
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
	e := rw.epoch()
	n := atomic.AddInt64(&rw.readers, -announcement(e))
	ok := uint64(n) < 1<<epochShift // otherwise no writer e was announced
	if !ok {
		atomic.AddInt64(&rw.readers, announcement(e))
	} else {
		if n > 0 {
			rw.moveOn(e)
		}
		rw.releaseQueue()
	}
	raceEnable()
	return ok
}

// lockQueue takes the writers' queue. A writer that finds the queue
// taken waits in queues' writers (internal/ctxwait), not in w's own
// queue: a wait there could not be given up, and one left behind would
// take the queue later. So all writers wait in one queue, first come
// first, whether they can give up or not. This wait, which cannot, is
// ctxwait's Lock, which has no select (see lockQueueOrCancel).
//
// Its caller has disabled the race detector, as has releaseQueue's:
// ctxwait's own synchronization is shown to the detector, w's is not
// (see rawQueue).
func (rw *RWMutex) lockQueue() {
	if rw.w.TryLock() {
		return
	}
	raceEnable()
	rw.queues().writers.Lock((*rawQueue)(rw))
	raceDisable()
}

// lockQueueOrCancel is lockQueue that gives up when done is closed, and
// then reports false; a nil done never is.
func (rw *RWMutex) lockQueueOrCancel(done <-chan struct{}) bool {
	if rw.w.TryLock() {
		return true
	}
	raceEnable()
	ok := rw.queues().writers.Acquire((*rawQueue)(rw), done)
	raceDisable()
	return ok
}

// releaseQueue releases the writers' queue, handing it to the first
// writer waiting, or ringing it. A writer makes the queues before it
// waits, so one that does so after the first look is rung by the second.
func (rw *RWMutex) releaseQueue() {
	raceEnable()
	if q := rw.q.Load(); q == nil || !q.writers.HandOff() {
		(*rawQueue)(rw).Unlock()
		if q := rw.q.Load(); q != nil {
			q.writers.Ring()
		}
	}
	raceDisable()
}

// rawQueue is the writers' queue as ctxwait takes and releases it, with
// the race detector blind to it, as to everything of the lock but the
// edges it is told of (race.go).
type rawQueue RWMutex

func (q *rawQueue) TryLock() bool {
	raceDisable()
	ok := q.w.TryLock()
	raceEnable()
	return ok
}

func (q *rawQueue) Unlock() {
	raceDisable()
	q.w.Unlock()
	raceEnable()
}

// moveOn ends epoch e, whose writer has withdrawn its announcement: the
// next writer's leaving and gate start empty, and the readers queued
// behind writer e get their tokens. rw.w is held.
func (rw *RWMutex) moveOn(e uint32) {
	ne := next(e)
	rw.leaving.Store(word(ne, 0))
	g := rw.gate.Swap(word(ne, 0))
	if _, n := unword(g); n > 0 {
		q := rw.queues()
		for range n {
			q.readers <- struct{}{}
		}
	}
}
