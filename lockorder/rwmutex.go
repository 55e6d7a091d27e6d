//go:build !syncwatch_off

package lockorder

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/syncword"
)

// An RWMutex is a reader/writer mutual exclusion lock that checks how it is
// used. It is a drop-in replacement for [sync.RWMutex]: the zero value is
// an unlocked mutex and the methods have sync's names and meanings.
//
// Besides what [Mutex] checks, ModeCheck reports recursive read locking
// (forbidden by sync: it deadlocks once a writer queues) and cycles that
// mix read and write locks. A cycle made only of read acquisitions is
// reported only if its locks have writers, since without a writer readers
// never block.
//
// An RWMutex must not be copied after first use.
type RWMutex struct {
	mu sync.RWMutex
	l  atomic.Pointer[class.Lock]
}

// NewRWMutex returns an unlocked RWMutex in the lock class called class.
func NewRWMutex(class string) *RWMutex {
	m := new(RWMutex)
	m.l.Store(newLock(class, "RWMutex", unsafe.Pointer(m)))
	return m
}

func (m *RWMutex) lock() *class.Lock {
	if l := m.l.Load(); l != nil {
		return l
	}
	return m.newLock()
}

// newLock is lock's rare half, kept out of line so that lock inlines.
//
//go:noinline
func (m *RWMutex) newLock() *class.Lock { return initLock(&m.l, "RWMutex", unsafe.Pointer(m)) }

// Lock locks m for writing, blocking until no reader or writer holds it.
func (m *RWMutex) Lock() {
	w := modeWord.Load()
	switch Mode(w & 3) {
	case ModeTrace:
		if !m.mu.TryLock() {
			traceWait(m.lock(), &m.mu)
		}
		return
	case ModeOff:
		m.mu.Lock()
		return
	}
	l := m.lock()
	gs := current(w)
	again, fresh := enter(gs, l, false)
	if fresh {
		newChain(gs, stack.Capture())
	}
	if !m.mu.TryLock() {
		checkWait(gs, l, false, &m.mu)
	}
	if again {
		reacquired(gs, l)
	}
	holds(gs, l)
	if w&profileBit != 0 {
		noteHold(gs, l, 3)
	}
}

// RLock locks m for reading. It must not be used for recursive read
// locking; in ModeCheck that is reported.
//
// Unlike Mutex.Lock, RLock has no inlined fast path: the one that fits the
// inliner's budget (a compare-and-swap from no readers to one) fails, and
// costs a contended read-modify-write, whenever other readers hold m, which
// made many concurrent readers 2.5x slower in ModeTrace.
func (m *RWMutex) RLock() {
	w := modeWord.Load()
	switch Mode(w & 3) {
	case ModeTrace:
		// Only a writer makes a reader wait. With none in sight, RLock
		// itself (one atomic add, which unlike a compare-and-swap never
		// fails when other readers come and go) is the way in; a writer
		// arriving in between makes a wait that goes untimed. Without a
		// verified layout, TryRLock is the way to look.
		if layoutOK {
			if atomic.LoadInt32(syncword.Readers(&m.mu)) >= 0 {
				m.mu.RLock()
				return
			}
		} else if m.mu.TryRLock() {
			return
		}
		traceWait(m.lock(), (*rlockerOf)(&m.mu))
		return
	case ModeOff:
		m.mu.RLock()
		return
	}
	m.rlockCheck(w)
}

// rlockCheck is RLock in ModeCheck, out of line so that RLock's other
// modes stay a small function.
func (m *RWMutex) rlockCheck(w uint32) {
	l := m.lock()
	id := goid.ID()
	gs := held.Slot(id)
	if gs == nil {
		gs = held.CurrentOf(id)
	}
	gs.Retag(w)
	var locked bool
	if gs.Len() == 0 {
		// Nothing held: nothing to check, so m may be tried first.
		locked = m.mu.TryRLock()
		gs.Push(held.Entry{Lock: l, Read: true, Gen: l.ReadGen(), Elem: l.Elem(true), Chain: chain.Key(l.Chain(true))})
	} else {
		if _, fresh := enter(gs, l, true); fresh {
			newChain(gs, stack.Capture())
		}
		locked = m.mu.TryRLock()
	}
	if !locked {
		checkWait(gs, l, true, (*rlockerOf)(&m.mu))
	}
	if w&profileBit != 0 {
		noteHold(gs, l, 4) // 4: called from RLock
	}
}

// TryLock tries to lock m for writing and reports whether it succeeded.
func (m *RWMutex) TryLock() bool {
	if !m.mu.TryLock() {
		return false
	}
	if w := modeWord.Load(); Mode(w&3) == ModeCheck {
		gs, l := current(w), m.lock()
		tryAcquired(gs, l, false)
		if w&profileBit != 0 {
			noteHold(gs, l, 3)
		}
	}
	return true
}

// TryRLock tries to lock m for reading and reports whether it succeeded.
func (m *RWMutex) TryRLock() bool {
	if !m.mu.TryRLock() {
		return false
	}
	if w := modeWord.Load(); Mode(w&3) == ModeCheck {
		gs, l := current(w), m.lock()
		tryAcquired(gs, l, true)
		if w&profileBit != 0 {
			noteHold(gs, l, 3)
		}
	}
	return true
}

// Unlock unlocks m for writing. It is a run-time error, reported first in
// ModeCheck, if m is not locked for writing on entry.
func (m *RWMutex) Unlock() {
	if w := modeWord.Load(); Mode(w&3) == ModeCheck {
		l := m.lock()
		if !releaseOwn(w, l, false) {
			m.unlockOther(l)
		}
		// Readers are not tracked by holder: forget the writer so that a
		// waiter blocked by readers is not told a stale writer holds m.
		l.ClearHolder()
	}
	m.mu.Unlock()
}

func (m *RWMutex) unlockOther(l *class.Lock) {
	if m.mu.TryLock() {
		m.mu.Unlock()
		reportBadUnlock(goid.ID(), l, "Unlock of unlocked")
		return
	}
	if m.mu.TryRLock() {
		m.mu.RUnlock()
		reportBadUnlock(goid.ID(), l, "Unlock of read-locked (not write-locked)")
		return
	}
	// Write-locked by another goroutine, released on its behalf: legal.
	releasedByOther(l)
}

// RUnlock undoes a single RLock. It is a run-time error, reported first in
// ModeCheck, if m is not locked for reading on entry.
func (m *RWMutex) RUnlock() {
	if w := modeWord.Load(); w&3 == uint32(ModeCheck) {
		l := m.lock()
		if gs := held.Slot(goid.ID()); gs == nil || gs.Len() == 0 || gs.Tag() != w ||
			gs.Top().Note != 0 || !popIfTopRead(gs, l) {
			if !releaseOwn(w, l, true) {
				m.runlockOther(l)
			}
		}
	}
	m.mu.RUnlock()
}

func (m *RWMutex) runlockOther(l *class.Lock) {
	if m.mu.TryLock() {
		m.mu.Unlock()
		reportBadUnlock(goid.ID(), l, "RUnlock of unlocked")
		return
	}
	// Read-held by others; one of their holds ends here.
	l.BumpReadGen()
}

// RLocker returns a Locker whose Lock and Unlock call m.RLock and
// m.RUnlock, checked like direct calls.
func (m *RWMutex) RLocker() sync.Locker { return (*rlocker)(m) }

type rlocker RWMutex

func (r *rlocker) Lock()   { (*RWMutex)(r).RLock() }
func (r *rlocker) Unlock() { (*RWMutex)(r).RUnlock() }

// LockContext locks m for writing, waiting at most until ctx is done; see
// [Mutex.LockContext].
func (m *RWMutex) LockContext(ctx context.Context) error {
	return m.lockContext(ctx, false)
}

// RLockContext locks m for reading, waiting at most until ctx is done; see
// [Mutex.LockContext].
func (m *RWMutex) RLockContext(ctx context.Context) error {
	return m.lockContext(ctx, true)
}

func (m *RWMutex) lockContext(ctx context.Context, read bool) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	try, lk, unlock := m.mu.TryLock, sync.Locker(&m.mu), m.mu.Unlock
	if read {
		try, lk, unlock = m.mu.TryRLock, m.mu.RLocker(), m.mu.RUnlock
	}
	w := modeWord.Load()
	if Mode(w&3) != ModeCheck {
		if try() {
			return nil
		}
		return waitContext(ctx, nil, m.lock(), read, lk, unlock)
	}
	l := m.lock()
	gs := current(w)
	again, fresh := enter(gs, l, read)
	if fresh {
		newChain(gs, stack.Capture())
	}
	if !try() {
		if err := waitContext(ctx, gs, l, read, lk, unlock); err != nil {
			return err
		}
	}
	if !read {
		if again {
			reacquired(gs, l)
		}
		holds(gs, l)
	}
	if w&profileBit != 0 {
		noteHold(gs, l, 4)
	}
	return nil
}

// AssertHeld reports a not-held violation if the calling goroutine does not
// hold m for writing. It checks only in ModeCheck.
func (m *RWMutex) AssertHeld() {
	if w := modeWord.Load(); Mode(w&3) == ModeCheck {
		if l := m.lock(); !heldBy(held.Mine(), w, l, false) {
			reportNotHeld(goid.ID(), l, false)
		}
	}
}

// AssertRHeld reports a not-held violation if the calling goroutine holds m
// neither for reading nor for writing. It checks only in ModeCheck.
func (m *RWMutex) AssertRHeld() {
	if w := modeWord.Load(); Mode(w&3) == ModeCheck {
		if l := m.lock(); !heldBy(held.Mine(), w, l, true) {
			reportNotHeld(goid.ID(), l, true)
		}
	}
}
