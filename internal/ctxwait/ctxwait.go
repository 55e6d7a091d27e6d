package ctxwait

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// registered counts the waiters of every lock.
var registered atomic.Int32

// Waiting reports whether any waiter is registered, of any lock. A
// releaser that checks it before it unlocks (an inlined fast path) must
// have its waiters poll (rule 2).
func Waiting() bool { return registered.Load() != 0 }

// Registered returns how many waiters are registered, of every lock.
func Registered() int { return int(registered.Load()) }

// A Locker is a lock as a waiter takes it and a releaser releases it:
// TryLock takes it if it is free, Unlock releases it.
type Locker interface {
	TryLock() bool
	Unlock()
}

// A Queue is the waiters of one lock, kept where the lock keeps it, so
// that they are reachable only through the lock: the runtime's
// goroutine-leak detection (Go 1.27) then finds them blocked for good
// when nothing but blocked goroutines can reach the lock. The zero value
// is an empty queue.
type Queue struct {
	mu sync.Mutex
	n  atomic.Int32 // its waiters, read without mu
	q  queue
}

// Lock takes lk, whose releases go through q.HandOff and q.Ring, however
// long it waits: it is Acquire with a done never closed. Its wait has no
// select, so that a program whose waits can all not be given up links
// none (the runtime's selectgo).
func (q *Queue) Lock(lk Locker) {
	w := q.join()
	wait(&q.mu, w, lk, w.await, q.leaver(w))
}

// Acquire takes lk, whose releases go through q.HandOff and q.Ring, or gives up
// when done is closed, and reports whether it took it; a nil done never
// is. If it gives up, lk is left as it was (rule 1). It may take lk
// although done is closed. It does not poll: a release that goes through
// q misses no waiter (rule 2).
func (q *Queue) Acquire(lk Locker, done <-chan struct{}) bool {
	w := q.join()
	return wait(&q.mu, w, lk, func() bool { return w.awaitOr(done) }, q.leaver(w))
}

// join registers a new waiter in q and returns it.
func (q *Queue) join() *waiter {
	w := newWaiter()
	q.mu.Lock()
	q.q.enqueue(w, &q.n)
	q.mu.Unlock()
	return w
}

// leaver returns wait's leave for w, a waiter of q.
func (q *Queue) leaver(w *waiter) func() bool {
	return func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.q.leave(w, &q.n)
	}
}

// HandOff is the first half of a release of the lock by its holder: it
// hands the lock to the first waiter if that waiter is starving (rule 3),
// and reports whether it did. If not, the holder unlocks, then calls Ring.
func (q *Queue) HandOff() bool {
	if q.n.Load() == 0 {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.q.handOff(&q.n)
}

// Ring is the second half of a release: once the lock is unlocked, it
// rings the first waiter. Looking for waiters after the unlock, it misses
// none.
func (q *Queue) Ring() {
	if q.n.Load() == 0 {
		return
	}
	q.mu.Lock()
	q.q.ringFirst()
	q.mu.Unlock()
}

// Acquire is Queue.Acquire for a sync.Mutex, m, that has no room for a
// Queue: its waiters queue in a table, by m's address, and its releases
// go through Unlock(m, lk).
func Acquire(m *sync.Mutex, lk Locker, done <-chan struct{}, polled bool) bool {
	s := shardOf(m)
	w := newWaiter()
	s.mu.Lock()
	q := s.locks[m]
	if q == nil {
		if s.locks == nil {
			s.locks = map[*sync.Mutex]*queue{}
		}
		q = new(queue)
		s.locks[m] = q
	}
	q.enqueue(w, &s.n)
	s.mu.Unlock()
	block := func() bool { return w.awaitOr(done) }
	if polled {
		p := newPoll(&s.mu, q)
		defer p.t.Stop()
		block = func() bool { return w.awaitPolled(done, p) }
	}
	return wait(&s.mu, w, lk, block, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		ok := q.leave(w, &s.n)
		s.drop(m, q)
		return ok
	})
}

// Unlock releases m, a lock of the table's, for its holder, as HandOff
// and Ring do for a Queue's; lk is m as its waiters take it.
func Unlock(m *sync.Mutex, lk Locker) {
	s := shardOf(m)
	if s.n.Load() != 0 {
		s.mu.Lock()
		handed := false
		if q := s.locks[m]; q != nil {
			handed = q.handOff(&s.n)
			s.drop(m, q)
		}
		s.mu.Unlock()
		if handed {
			return
		}
	}
	lk.Unlock()
	if s.n.Load() != 0 {
		s.mu.Lock()
		if q := s.locks[m]; q != nil {
			q.ringFirst()
		}
		s.mu.Unlock()
	}
}

// wait is the wait of Lock and Acquire for w, whose fields mu guards: it
// tries lk each time block returns, until it takes lk or is handed it, or
// block reports that w gives up. leave unregisters w and reports whether
// it had not been handed the lock.
func wait(mu *sync.Mutex, w *waiter, lk Locker, block, leave func() bool) bool {
	for {
		if lk.TryLock() {
			leave()
			return true
		}
		if !block() {
			return !leave()
		}
		mu.Lock()
		granted := w.granted
		mu.Unlock()
		if granted {
			return true
		}
	}
}

// A waiter is one Acquire. Its fields other than bell are guarded by its
// queue's mutex.
type waiter struct {
	bell    chan struct{} // rung (a token sent) by releases; capacity 1
	rung    bool          // rung at least once: it has had a chance
	granted bool          // a release handed the lock over: it holds it
}

func newWaiter() *waiter { return &waiter{bell: make(chan struct{}, 1)} }

// await waits for w's bell and reports true: w does not give up.
func (w *waiter) await() bool {
	<-w.bell
	return true
}

// awaitOr waits for w's bell, or for done to be closed, and then reports
// false.
func (w *waiter) awaitOr(done <-chan struct{}) bool {
	select {
	case <-w.bell:
		return true
	case <-done:
		return false
	}
}

// awaitPolled is awaitOr that also returns at each tick of p, so that w
// tries the lock again (rule 2).
func (w *waiter) awaitPolled(done <-chan struct{}, p *poll) bool {
	select {
	case <-w.bell:
	case <-p.c:
		p.tick()
	case <-done:
		return false
	}
	return true
}

// A queue is the waiters of one lock, first come first. Its mutex (the
// Queue's, or the table shard's) guards it.
type queue struct {
	waiters []*waiter
	handed  bool // the last release handed the lock to a waiter
	// visits counts the releases that looked at the queue while their
	// goroutine held the lock. One after a waiter registered shows that
	// the holder when it registered is gone, and with it any release that
	// missed it (rule 2).
	visits uint64
}

// enqueue registers w, counting it in n.
func (q *queue) enqueue(w *waiter, n *atomic.Int32) {
	q.waiters = append(q.waiters, w)
	n.Add(1)
	registered.Add(1)
}

// leave unregisters w, counted in n, and reports whether it had not been
// handed the lock. A ring it had not answered goes to the next waiter,
// which may find the lock free.
func (q *queue) leave(w *waiter, n *atomic.Int32) bool {
	if w.granted {
		return false
	}
	for i, x := range q.waiters {
		if x == w {
			q.remove(i, n)
			break
		}
	}
	select {
	case <-w.bell:
		q.ringFirst()
	default:
	}
	return true
}

// remove unregisters the i'th waiter, counted in n.
func (q *queue) remove(i int, n *atomic.Int32) {
	q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
	n.Add(-1)
	registered.Add(-1)
}

// handOff gives the lock, held by the caller, to the first waiter if that
// waiter is starving (rule 3), and reports whether it did.
func (q *queue) handOff(n *atomic.Int32) bool {
	if len(q.waiters) == 0 {
		return false
	}
	q.visits++
	if q.handed {
		q.handed = false
		return false
	}
	w := q.waiters[0]
	if !w.rung {
		return false
	}
	w.granted = true
	q.handed = true
	q.remove(0, n)
	w.ring()
	return true
}

// ringFirst rings the first waiter, if there is one.
func (q *queue) ringFirst() {
	if len(q.waiters) > 0 {
		w := q.waiters[0]
		w.rung = true
		w.ring()
	}
}

// ring sends w a token unless one is waiting for it already.
func (w *waiter) ring() {
	select {
	case w.bell <- struct{}{}:
	default:
	}
}

// The table of Acquire's locks, split in shards so that releases of
// unrelated locks do not contend on one mutex. A shard holds a lock's
// queue only while it has waiters.
var shards [shardCount]shard

const shardCount = 64

type shard struct {
	mu    sync.Mutex
	n     atomic.Int32 // the waiters in locks, read without mu
	locks map[*sync.Mutex]*queue
	_     [64]byte // keeps neighbouring shards' mutexes off one cache line
}

func shardOf(m *sync.Mutex) *shard {
	p := uintptr(unsafe.Pointer(m))
	return &shards[(p>>3^p>>11)%shardCount]
}

// drop forgets m's queue, q, if it has no waiters and is still m's: a
// waiter handed the lock leaves a queue that may have been dropped and
// replaced by a new one since, whose waiters must stay findable. s.mu is
// held.
func (s *shard) drop(m *sync.Mutex, q *queue) {
	if len(q.waiters) == 0 && s.locks[m] == q {
		delete(s.locks, m)
	}
}
