package ctxwait

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// The poll of rule 2: its first interval, doubled up to pollMax.
const (
	pollMin = 100 * time.Microsecond
	pollMax = 100 * time.Millisecond
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

// Acquire takes lk, whose releases go through Unlock(key, lk), or gives up
// when done is closed, and reports whether it took it; a nil done never
// is. If it gives up, lk is left as it was (rule 1). It may take lk
// although done is closed. polled says whether a release of key may miss
// the waiter (rule 2).
func Acquire(key *sync.Mutex, lk Locker, done <-chan struct{}, polled bool) bool {
	s := shardOf(key)
	w := &waiter{bell: make(chan struct{}, 1)}
	s.mu.Lock()
	q := s.enqueue(key, w)
	since := q.visits
	s.mu.Unlock()

	var poll *time.Timer
	var polling <-chan time.Time
	d := pollMin
	if polled {
		poll = time.NewTimer(d)
		defer poll.Stop()
		polling = poll.C
	}
	for {
		if lk.TryLock() {
			s.leave(key, w)
			return true
		}
		select {
		case <-w.bell:
			s.mu.Lock()
			granted := w.granted
			s.mu.Unlock()
			if granted {
				return true
			}
		case <-polling:
			s.mu.Lock()
			visited := q.visits != since
			s.mu.Unlock()
			if visited {
				polling = nil // rule 2: no release can miss w now
				continue
			}
			d = min(2*d, pollMax)
			poll.Reset(d)
		case <-done:
			return !s.leave(key, w)
		}
	}
}

// Unlock releases lk, whose waiters wait under key, for its holder: it
// hands lk to a starving waiter (rule 3), or unlocks it and rings its
// first waiter. It checks for waiters after it unlocks, so a waiter never
// misses it.
func Unlock(key *sync.Mutex, lk Locker) {
	s := shardOf(key)
	if s.n.Load() != 0 && s.handOff(key) {
		return
	}
	lk.Unlock()
	if s.n.Load() != 0 {
		s.ring(key)
	}
}

// A waiter is one Acquire. Its fields other than bell are guarded by its
// shard's mu.
type waiter struct {
	bell    chan struct{} // rung (a token sent) by releases; capacity 1
	rung    bool          // rung at least once: it has had a chance
	granted bool          // a release handed the lock over: it holds it
}

// A queue is the waiters of one lock, first come first.
type queue struct {
	waiters []*waiter
	handed  bool // the last release handed the lock to a waiter
	// visits counts the releases that looked at the queue while their
	// goroutine held the lock. One after a waiter registered shows that
	// the holder when it registered is gone, and with it any release that
	// missed it (rule 2).
	visits uint64
}

// shards split the table, so that releases of unrelated locks do not
// contend on one mutex. Each holds a queue only while it has waiters.
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

// enqueue registers w as a waiter for m and returns m's queue. s.mu is
// held.
func (s *shard) enqueue(m *sync.Mutex, w *waiter) *queue {
	q := s.locks[m]
	if q == nil {
		if s.locks == nil {
			s.locks = map[*sync.Mutex]*queue{}
		}
		q = &queue{}
		s.locks[m] = q
	}
	q.waiters = append(q.waiters, w)
	s.n.Add(1)
	registered.Add(1)
	return q
}

// leave unregisters w, a waiter for m, and reports whether it had not
// been handed the lock. A ring it had not answered goes to the next
// waiter, which may find m free.
func (s *shard) leave(m *sync.Mutex, w *waiter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.granted {
		return false
	}
	q := s.locks[m]
	for i, x := range q.waiters {
		if x == w {
			s.remove(m, q, i)
			break
		}
	}
	select {
	case <-w.bell:
		s.ringFirst(q)
	default:
	}
	return true
}

// remove unregisters m's i'th waiter. s.mu is held.
func (s *shard) remove(m *sync.Mutex, q *queue, i int) {
	q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
	if len(q.waiters) == 0 {
		delete(s.locks, m)
	}
	s.n.Add(-1)
	registered.Add(-1)
}

// handOff gives m, held by the caller, to its first waiter if that waiter
// is starving (rule 3), and reports whether it did.
func (s *shard) handOff(m *sync.Mutex) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.locks[m]
	if q == nil {
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
	s.remove(m, q, 0)
	w.ring()
	return true
}

// ring rings m's first waiter after m was unlocked.
func (s *shard) ring(m *sync.Mutex) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.locks[m]; q != nil {
		s.ringFirst(q)
	}
}

// ringFirst rings q's first waiter, if it has one. s.mu is held.
func (s *shard) ringFirst(q *queue) {
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
