//go:build !syncwatch_off

package lockorder

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// Copies. A mutex's identity is a pointer it holds, so a copy of a mutex
// made after NewMutex, or after its first use, is the same lock to the
// checker, and a goroutine that locks both looked like one locking a lock
// it holds. go vet's copylocks check finds such copies where they are
// made; the checker finds them where they would give a false
// recursive-lock report, and nowhere else, so that they cost nothing on
// the way to any other lock: when a goroutine is about to be reported for
// taking a lock it holds, the mutex it is taking is tried first. Locked,
// it may be this goroutine's own hold: the report stands. Unlocked, the
// hold is of another mutex with the same identity: one of the two is a
// copy of the other. That is reported as such, and the mutex being locked
// gets an identity of its own, so that checking goes on between the two.
// A copy that another goroutine holds at that moment cannot be told from
// the goroutine's own hold, and is reported as a recursive lock, as it
// was before.

// owner is what the checker needs of a mutex besides its identity, to
// tell a copy of it from a recursive acquisition.
type owner interface {
	// free reports whether the mutex is unlocked: it tries to lock it
	// and, if that succeeds, unlocks it at once.
	free() bool
	// rebind gives the mutex an identity of its own, in place of old,
	// and returns it.
	rebind(old *class.Lock) *class.Lock
	// at returns the mutex's address, 0 if it has no copies to tell.
	at() uintptr
}

// recursive is called when gs, taking e.Lock through the mutex m, already
// holds it (h). If m is locked, this may be gs's own hold, and it returns
// true. A write hold is then reported as a recursive acquisition at once. A
// read hold is not: an RWMutex read-locked by one goroutine may be
// read-unlocked by another, so h may have been handed over. A recursive
// read lock is held back until gs releases both holds itself (see
// holdBackRecursiveRead); a blocking write lock over a read hold is left
// to the wait-for graph, which reports gs waiting for itself once the
// wait has lasted its grace period with the hold still gs's, and a
// LockContext that gives up over it is held back (gaveUpOverRead). If m
// is unlocked, the hold is
// not of m: either it is of a copy of m (or of the mutex m is a copy of),
// reported as such, and e gets m's new identity; or another goroutine
// released it on gs's behalf since gs looked (its release of the holder
// comes before its Unlock, which came before free's TryLock), and the
// stale hold is dropped. e's chain key is then computed anew. A read
// hold's release by another goroutine frees m before it makes the hold
// stale (the reader count first, then the read generation, R13): a read
// hold still valid, met taking the very mutex its identity was made for
// (same address), may be such a release under way, or a copy's hold (the
// copy read-locked first). recursive waits for the hold to go stale, for
// at most handOffWait, before it takes it for a copy's.
func recursive(gs *held.G, m owner, e *held.Entry, h held.Entry) bool {
	if !m.free() {
		if h.Read && e.Read {
			holdBackRecursiveRead(gs, e.Lock, stack.Capture())
		}
		// Over a write hold the goroutine now blocks, unless another
		// goroutine unlocks m (legal: a hand-off). The wait-for graph sees
		// it waiting for itself, and the monitor reports it, as a
		// recursive lock, once there is evidence that nobody can (rule W1).
		return true
	}
	if h.Read && m.at() == e.Lock.Label().Addr {
		awaitReadHandOff(gs, &h)
	}
	if gs.Valid(&h) {
		old := e.Lock
		e.Lock = m.rebind(old)
		reportCopied(gs, old, e.Lock)
	} else {
		gs.Prune()
	}
	e.Elem = e.Lock.Elem(e.Read)
	e.Chain = chainAfter(gs, e.Elem)
	return false
}

// handOffWait bounds recursive's wait for a read hand-off under way to
// make the hold stale: a few instructions, unless the releasing goroutine
// is descheduled between them.
const handOffWait = 100 * time.Millisecond

// awaitReadHandOff waits until gs's read hold h is stale, or handOffWait
// has passed. Only a copy read-locked before its original pays the wait,
// once: the copy then gets an identity of its own.
func awaitReadHandOff(gs *held.G, h *held.Entry) {
	deadline := time.Now().Add(handOffWait)
	for i := 0; gs.Valid(h); i++ {
		if i < 64 {
			runtime.Gosched()
			continue
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func (m *Mutex) free() bool {
	if m.mu.TryLock() {
		unlockSync(&m.mu)
		return true
	}
	return false
}

func (m *Mutex) at() uintptr { return uintptr(unsafe.Pointer(m)) }

func (m *Mutex) rebind(old *class.Lock) *class.Lock {
	return rebind(&m.l, old, kind.Mutex, unsafe.Pointer(m))
}

func (m *RWMutex) free() bool {
	if m.mu.TryLock() {
		m.mu.Unlock()
		return true
	}
	return false
}

func (m *RWMutex) at() uintptr { return uintptr(unsafe.Pointer(m)) }

func (m *RWMutex) rebind(old *class.Lock) *class.Lock {
	return rebind(&m.l, old, kind.RWMutex, unsafe.Pointer(m))
}

// rebind replaces old, the identity at p of the mutex at addr, with a new
// one in old's class (in a class of its own if old's was, named after
// old's site: the copy is of the same field, and takes the site's next
// instance number), unless another goroutine did first, and returns p's
// identity.
func rebind(p *atomic.Pointer[class.Lock], old *class.Lock, k kind.Kind, addr unsafe.Pointer) *class.Lock {
	if !eng.copied.Load() {
		eng.copied.Store(true) // the pairs of the original's identity mixed two locks (R26)
	}
	var l *class.Lock
	if old.Class.Named {
		l = keyed(class.New(old.Class, k, uintptr(addr)))
	} else {
		l = keyed(class.NewAt(old.Site, k, uintptr(addr)))
	}
	l.MarkUsed() // a copy made after first use: not fresh
	if p.CompareAndSwap(old, l) {
		return l
	}
	return p.Load()
}
