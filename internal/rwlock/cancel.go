package rwlock

import "sync/atomic"

// The waits that can be given up; see "Giving up" in the package doc.

// LockQueued finishes a write lock whose caller holds the writers' queue
// (see [WriterQueue]), as Lock does: it announces the writer and waits for
// the readers in. If done is closed first, it withdraws, releases the
// writers' queue and reports false, leaving rw as it would be had the
// writer never come; a nil done never is. It may lock although done is
// closed.
func (rw *RWMutex) LockQueued(done <-chan struct{}) bool {
	rw.raceQueues()
	raceDisable()
	e := rw.epoch()
	a := announcement(e)
	n := int32(atomic.AddInt64(&rw.readers, a) - a)
	ok := n == 0 || rw.awaitReadersOrCancel(e, n, done)
	raceEnable()
	if ok {
		rw.writerIn()
	}
	return ok
}

// awaitReadersOrCancel is awaitReaders that gives up when done is closed,
// and then reports false; a nil done never is.
func (rw *RWMutex) awaitReadersOrCancel(e uint32, n int32, done <-chan struct{}) bool {
	if rw.expectReaders(e, n) {
		return true
	}
	q := rw.queues()
	if done == nil {
		<-q.writer
		return true
	}
	select {
	case <-q.writer:
		return true
	case <-done:
	}
	// Give up: first end the readers' count of this writer, which decides
	// a race with the last reader out, then withdraw. In the other order a
	// reader could get in between the two and the last reader out then
	// let the writer in with it.
	for {
		l := rw.leaving.Load()
		if _, left := unword(l); left == 0 {
			<-q.writer // the last reader has just let us in
			return true
		}
		if rw.leaving.CompareAndSwap(l, word(next(e), 0)) {
			break
		}
	}
	atomic.AddInt64(&rw.readers, -announcement(e))
	rw.moveOn(e)
	rw.releaseQueue()
	return false
}

// RLockOrCancel locks rw for reading, or gives up when done is closed and
// reports false, leaving rw as it was. It may lock although done is
// closed.
func (rw *RWMutex) RLockOrCancel(done <-chan struct{}) bool {
	v := rw.AddReader(1)
	if v >= 0 || !rw.Enqueue(v) {
		rw.ReaderIn()
		return true
	}
	rw.raceQueues()
	raceDisable()
	q := rw.queues()
	ok := true
	select {
	case <-q.readers:
	case <-done:
		if ok = !rw.dequeue(v); ok {
			<-q.readers // the writer let us in meanwhile
		}
	}
	raceEnable()
	if ok {
		rw.ReaderIn()
	}
	return ok
}

// dequeue takes back the place at the gate of a reader queued by
// Enqueue(v), and its count, and reports whether it did: false means the
// writer has let the reader in, and a token was sent for it.
func (rw *RWMutex) dequeue(v int64) bool {
	_, e := split(v)
	for {
		g := rw.gate.Load()
		if ge, _ := unword(g); ge != e {
			return false
		}
		if rw.gate.CompareAndSwap(g, g-1) {
			break
		}
	}
	rw.uncount(e)
	return true
}

// CancelReader undoes the add of 1 to the reader count that returned v < 0
// for a reader that has not queued (Enqueue): the reader gives up its
// RLock, leaving rw as it was.
func (rw *RWMutex) CancelReader(v int64) {
	_, e := split(v)
	rw.raceQueues()
	raceDisable()
	rw.uncount(e)
	raceEnable()
}

// uncount takes back the count of a reader that gave up, having counted
// itself while writer e was announced.
func (rw *RWMutex) uncount(e uint32) {
	v := atomic.AddInt64(&rw.readers, -1)
	if v >= 0 {
		return
	}
	if _, ve := split(v); ve != e {
		// Writer e let the reader in, and a later writer counted it as in
		// and waits for it.
		rw.leave(v)
	}
}
