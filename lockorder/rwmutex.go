//go:build !syncwatch_off

package lockorder

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/internal/rwlock"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// An RWMutex is a reader/writer mutual exclusion lock that checks how it is
// used. It is a drop-in replacement for [sync.RWMutex]: the zero value is
// an unlocked mutex and the methods have sync's names and meanings.
//
// It runs sync.RWMutex's algorithm on a lock of its own (writers queue,
// then wait for the readers in; readers that come while a writer holds or
// waits queue behind it), so that its uncontended RLock and RUnlock can be
// one atomic add inlined into the caller. A goroutine blocked on it shows
// as "chan receive" in a goroutine dump. Unlike sync's, its waits are on
// channels, made by the first goroutine that has to wait: in a
// testing/synctest bubble they are the bubble's. Such an RWMutex must
// then be waited for only inside that bubble (from outside, a wait is a
// fatal error, "receive on synctest channel from outside bubble"), and a
// wait inside the bubble behind a holder outside it makes the bubble look
// deadlocked to synctest. An RWMutex shared by a bubble and the code
// around it (a package-level variable) must not be contended inside the
// bubble; sync's lock waits are not durable in a bubble, so sync.RWMutex
// has neither limit. As with sync, RUnlock or Unlock of
// an RWMutex not so locked is a fatal error that ends the program (after a
// report in ModeCheck); the message starts "fatal error: lockorder:".
//
// Besides what [Mutex] checks, ModeCheck reports recursive read locking
// (forbidden by sync: it deadlocks once a writer queues) and cycles that
// mix read and write locks. A cycle made only of read acquisitions is
// reported only if its locks have writers, since without a writer readers
// never block.
//
// An RWMutex must not be copied after first use, nor after NewRWMutex
// returns it; see [Mutex].
type RWMutex struct {
	mu rwlock.RWMutex
	l  atomic.Pointer[class.Lock]
}

// NewRWMutex returns an unlocked RWMutex in the lock class called class.
func NewRWMutex(class string) *RWMutex {
	m := new(RWMutex)
	m.l.Store(newLock(class, kind.RWMutex, unsafe.Pointer(m)))
	return m
}

// SetClass puts m, a zero-value RWMutex, in the lock class called name, as
// NewRWMutex(name) would; see [Mutex.SetClass].
func (m *RWMutex) SetClass(name string) { setClass(&m.l, name, kind.RWMutex, unsafe.Pointer(m)) }

func (m *RWMutex) lock() *class.Lock {
	if l := m.l.Load(); l != nil {
		return l
	}
	return m.newLock()
}

// newLock is lock's rare half, kept out of line so that lock inlines.
//
//go:noinline
func (m *RWMutex) newLock() *class.Lock { return initLock(&m.l, kind.RWMutex, unsafe.Pointer(m)) }

// firstLock is lock's rare half for a check-mode acquisition of m: see
// firstLockOf.
//
//go:noinline
func (m *RWMutex) firstLock() (*class.Lock, stack.ID) {
	return firstLockOf(&m.l, kind.RWMutex, unsafe.Pointer(m))
}

// Lock locks m for writing, blocking until no reader or writer holds it.
func (m *RWMutex) Lock() {
	w := modeWord.Load()
	switch Mode(w & modeMask) {
	case ModeTrace:
		if !m.mu.TryLock() {
			traceWait(m.lock(), (*rwlock.Writer)(&m.mu))
		}
		return
	case ModeOff:
		m.mu.Lock()
		return
	}
	l := m.l.Load()
	var first stack.ID
	if l == nil {
		l, first = m.firstLock()
	} else {
		first = firstStack(l)
	}
	a, fresh := acquiring(current(w), l, w, false).begin(m)
	if fresh {
		newChain(a.gs, chainStack(first))
	}
	if !m.mu.TryLock() {
		a.wait((*rwlock.Writer)(&m.mu))
	}
	a.acquired(skipFromMethod)
}

// RLock locks m for reading. It must not be used for recursive read
// locking; in ModeCheck that is reported.
func (m *RWMutex) RLock() {
	if rwlock.RaceEnabled {
		// The race detector must not see the count's atomic add: it would
		// order readers after one another (see internal/rwlock).
		m.rlockSlow(m.mu.AddReader(1))
		m.mu.ReaderIn()
		return
	}
	// The fast path, inlined (see fastpath.go): the reader count is m's
	// own (internal/rwlock), so RLock always starts with its atomic add,
	// which is the whole of an uncontended RLock. A negative count means a
	// writer holds m or waits for it, and the slow half waits.
	if r := atomic.AddInt64(m.mu.Readers(), 1); r|atomic.LoadInt64(&readSlow) < 0 {
		m.rlockSlow(r)
	}
}

// rlockSlow is RLock past the inlined fast path: the add to the reader
// count, which returned r, has been made, so m is read-locked if r >= 0,
// and this reader queues behind the writer and waits for it to let it in
// if r < 0.
//
// It does the common case of ModeCheck itself: m read-locked already, by
// a goroutine that holds nothing, m having nothing to record of its first
// write, and the held-locks profiles off. Nothing is checked or reported
// then; the hold is recorded. The rest is rlockChecked, whose frame this
// case does not pay for.
func (m *RWMutex) rlockSlow(r int64) {
	if w := modeWord.Load(); w&(modeMask|profileBit) == uint32(ModeCheck) && r >= 0 {
		l := m.lock()
		if gs := gls.Mine(goid.ID()); gs != nil && gs.Tag() == w && gs.Len() == 0 && !gs.HasPending() && l.Quiet(gs.Seq()) {
			gs.PushHold(l, true, l.ReadGen(), l.Elem(true), chain.Key(l.Chain(true)))
			return
		}
	}
	m.rlockChecked(r)
}

// rlockChecked is rlockSlow but for its common case.
func (m *RWMutex) rlockChecked(r int64) {
	w := modeWord.Load()
	switch Mode(w & modeMask) {
	case ModeTrace:
		if r < 0 && m.mu.Enqueue(r) {
			traceWait(m.lock(), (*rwlock.Admitted)(&m.mu))
		}
		return
	case ModeOff:
		if r < 0 {
			m.mu.WaitReader(r)
		}
		return
	}
	l := m.l.Load()
	var first stack.ID
	if l == nil {
		l, first = m.firstLock()
	} else {
		first = firstStack(l)
	}
	id := goid.ID()
	gs := gls.Mine(id)
	if gs == nil {
		gs = gls.Get(id)
	}
	gs.Retag(w)
	shared := false
	if !l.Plain() && !l.Quiet(gs.Seq()) {
		noteFirst(l)
		shared = l.Use(false, id, gs.Seq(), nil) == class.Shared
	}
	if gs.Len() == 0 && !shared {
		// Nothing held: nothing to check or report.
		gs.Push(held.Entry{Lock: l, Read: true, Gen: l.ReadGen(), Elem: l.Elem(true), Chain: chain.Key(l.Chain(true))})
		if r < 0 && m.mu.Enqueue(r) {
			a := acquiring(gs, l, w, true)
			a.wait((*rwlock.Admitted)(&m.mu))
		}
	} else {
		// The checks may report, and a handler must run as though this
		// RLock had not begun: not holding m, and not counted as a reader
		// waiting for it (a handler that write-locks m would wait for this
		// goroutine; one that panics would leave a reader counted). So
		// the read is handed back (if a writer keeps it waiting, its
		// count is taken back); RLock then takes m anew. (So too when
		// this RLock contends m's initialisation write, which then counts
		// as a write: see use.)
		if r >= 0 {
			m.mu.RUnlock()
		} else {
			m.mu.CancelReader(r)
		}
		if shared {
			initShared(l)
		}
		// The acquisition path (acquire.go), its use recorded above.
		a := acquiring(gs, l, w, true)
		a.f |= acqUsed
		a, fresh := a.begin(m)
		if fresh {
			newChain(gs, chainStack(first))
		}
		if !m.mu.TryRLock() {
			a.wait((*rwlock.Reader)(&m.mu))
		}
		a.acquired(skipFromChecked)
		return
	}
	// The acquisition path's last steps, inlined.
	if gs.HasPending() {
		gs.TookRead(l) // one more own hold to release (see held.Pending)
	}
	if w&profileBit != 0 {
		noteHold(gs, l, skipFromChecked)
	}
}

// TryLock tries to lock m for writing and reports whether it succeeded.
func (m *RWMutex) TryLock() bool {
	if !m.mu.TryLock() {
		tryFailed(&m.l)
		return false
	}
	if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
		tried(w, m.lock(), false)
	}
	return true
}

// TryRLock tries to lock m for reading and reports whether it succeeded.
func (m *RWMutex) TryRLock() bool {
	if !m.mu.TryRLock() {
		tryFailed(&m.l)
		return false
	}
	if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
		tried(w, m.lock(), true)
	}
	return true
}

// Unlock unlocks m for writing. It is a run-time error, reported first in
// ModeCheck, if m is not locked for writing on entry.
func (m *RWMutex) Unlock() { m.unlock(false) }

// unlock is Unlock; inWait is releaseDeep's: set for a Cond.Wait on m,
// which takes m again before it returns (the caller's section under m
// goes on, R23).
func (m *RWMutex) unlock(inWait bool) {
	var shared *class.Lock
	var proved *held.G
	if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
		l := m.lock()
		var ok bool
		if ok, proved = releaseOwn(w, l, false, inWait); !ok {
			shared = m.unlockOther(l)
		}
		// Readers are not tracked by holder: forget the writer so that a
		// waiter blocked by readers is not told a stale writer holds m.
		l.ClearHolder()
	}
	if !m.mu.Unlock() {
		fatal("lockorder: Unlock of unlocked RWMutex")
	}
	if shared != nil {
		initShared(shared)
	}
	if proved != nil {
		finishRelease(proved)
	}
}

// unlockOther handles an Unlock by a goroutine that does not hold m; see
// Mutex.unlockOther.
func (m *RWMutex) unlockOther(l *class.Lock) *class.Lock {
	if m.mu.TryLock() {
		m.mu.Unlock()
		reportBadUnlock(goid.ID(), l, unlockOfUnlocked)
		return nil
	}
	if m.mu.TryRLock() {
		m.mu.RUnlock()
		reportBadUnlock(goid.ID(), l, unlockOfReadLocked)
		return nil
	}
	// Write-locked by another goroutine, released on its behalf: legal.
	shared := releasedInit(l)
	handedOff(l)
	releasedByOther(l)
	return shared
}

// RUnlock undoes a single RLock. It is a fatal error, reported first in
// ModeCheck, if m is not locked for reading on entry.
func (m *RWMutex) RUnlock() {
	if rwlock.RaceEnabled {
		m.mu.ReaderOut()
		m.runlockSlow(m.mu.AddReader(-1))
		return
	}
	// The fast path, inlined: the atomic subtraction that is the whole of
	// an uncontended RUnlock. A negative result means a writer waits (or m
	// was not read-locked).
	if r := atomic.AddInt64(m.mu.Readers(), -1); r|atomic.LoadInt64(&readSlow) < 0 {
		m.runlockSlow(r)
	}
}

// runlockInWait is RUnlock for a Cond.Wait on m.RLocker(), which takes
// the read hold again before it returns: the caller's section under m
// goes on (R23).
func (m *RWMutex) runlockInWait() {
	if rwlock.RaceEnabled {
		m.mu.ReaderOut()
		m.runlockChecked(m.mu.AddReader(-1), true)
		return
	}
	m.runlockChecked(atomic.AddInt64(m.mu.Readers(), -1), true)
}

// runlockSlow is RUnlock past the inlined fast path, after the subtraction
// from the reader count, which returned r. If r >= 0 the read lock is
// already released; ModeCheck then only brings its records up to date.
//
// It does the common case of ModeCheck itself, as Mutex.unlockSlow does:
// the caller's own read hold, taken last, released with no writer waiting
// and nothing held back on the caller's read holds. The rest is
// runlockChecked, whose frame this case does not pay for.
func (m *RWMutex) runlockSlow(r int64) {
	if w := modeWord.Load(); w&modeMask == uint32(ModeCheck) && r >= 0 && !rwlock.Unheld(r) {
		l := m.lock()
		if gs := gls.Home(goid.ID()); gs != nil && gs.Len() != 0 && gs.Tag() == w && gs.Top().Note == 0 &&
			!gs.HasPending() && !gs.HasWaits() && !gs.HasLostReads() && popIfTopRead(gs, l) {
			gs.Rest()
			return
		}
	}
	m.runlockChecked(r, false)
}

// runlockChecked is runlockSlow but for its common case. inWait is
// releaseDeep's.
func (m *RWMutex) runlockChecked(r int64, inWait bool) {
	var (
		l      *class.Lock // m's identity, in ModeCheck
		gs     *held.G     // the caller's state, if it released a hold of its own
		me     *held.G     // the caller's state, if it has held-back reports
		proved []held.Pending
		shared bool        // the release shows m shared at its initialisation write
		loose  []Violation // cycles R-RW held back on m's read holds (see loosened)
	)
	if w := modeWord.Load(); w&modeMask == uint32(ModeCheck) {
		l = m.lock()
		if rwlock.Unheld(r) {
			// Not read-locked: report it, with its stack, before the fatal
			// error.
			m.mu.ReaderLeft(r) // undoes the subtraction
			reportBadUnlock(goid.ID(), l, runlockOfUnlocked)
			fatal("lockorder: RUnlock of unlocked RWMutex")
		}
		id := goid.ID()
		gs = gls.Home(id)
		if gs == nil {
			// Away from its home slot, taken by another's: the same
			// common case, or releaseOwn rests gs before the end below.
			gs = gls.Find(id)
		}
		if gs == nil || gs.Len() == 0 || gs.Tag() != w || gs.Top().Note != 0 || !popIfTopRead(gs, l) {
			if ok, _ := releaseOwn(w, l, true, inWait); !ok {
				// Read-held by others; one of their holds ends here.
				if l.BumpReadGen() == 1 {
					loose = loosened(l)
				}
				handoffs.n.Add(1) // the holder's record is stale: see prepareNested
				gs = nil
				shared = !l.Plain() && witnessed(l)
			} else if gs == nil {
				gs = gls.Find(id)
			}
		}
		if gs != nil {
			me = gs
		} else if me = gls.Find(id); me != nil && me.Tag() != w {
			me = nil
		}
		if me != nil && me.HasPending() {
			// Every RUnlock counts for the caller's held-back reports,
			// whatever its records say of the hold: it may prove a
			// recursive lock, reported once m is released (a handler
			// may lock it).
			proved = me.ReleasedRead(l)
		}
	}
	if r < 0 && !m.mu.ReaderLeft(r) {
		fatal("lockorder: RUnlock of unlocked RWMutex")
	}
	if shared {
		initShared(l)
	}
	for _, v := range loose {
		publish(v)
	}
	if len(proved) > 0 {
		publishProved(me, l, proved)
	}
	if gs != nil && (gs.HasWaits() || gs.HasLostReads()) && !readsHeld(gs, l) {
		// The last read hold of m that gs held is released, by gs: the
		// edges that waited on it are proved (see holdReadEdges), and
		// chains whose edges from it were dropped are seen anew under the
		// next hold (held.proving.ReadReleased).
		gs.ReadReleased(l.ID)
		provedReads(gs, l)
	}
	if gs != nil {
		gs.Rest()
	}
}

// RLocker returns a Locker whose Lock and Unlock call m.RLock and
// m.RUnlock, checked like direct calls.
func (m *RWMutex) RLocker() sync.Locker { return (*rlocker)(m) }

type rlocker RWMutex

func (r *rlocker) Lock()   { (*RWMutex)(r).RLock() }
func (r *rlocker) Unlock() { (*RWMutex)(r).RUnlock() }

// LockContext locks m for writing, waiting at most until ctx is done; see
// [Mutex.LockContext]. If it gives up while readers hold m, it withdraws
// at once: readers that queued behind it are let in, and new ones get in,
// as though it had never come. While another writer holds m or waits for
// it, it waits in the writers' queue, first come first with Lock's
// writers, and can give that up too; it never holds readers out.
func (m *RWMutex) LockContext(ctx context.Context) error {
	return m.lockContext(ctx, false)
}

// RLockContext locks m for reading, waiting at most until ctx is done; see
// [Mutex.LockContext]. If it gives up, nothing of its wait is left
// behind.
func (m *RWMutex) RLockContext(ctx context.Context) error {
	return m.lockContext(ctx, true)
}

func (m *RWMutex) lockContext(ctx context.Context, read bool) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	try, lk := m.mu.TryLock, cancelLocker((*rwlock.Writer)(&m.mu))
	if read {
		try, lk = m.mu.TryRLock, (*rwlock.Reader)(&m.mu)
	}
	w := modeWord.Load()
	if Mode(w&modeMask) != ModeCheck {
		if try() {
			return nil
		}
		return waitContext(ctx, nil, m.lock(), read, lk)
	}
	if ctx.Err() != nil {
		if read {
			return doneContext(ctx, m.lock(), m.TryRLock)
		}
		return doneContext(ctx, m.lock(), m.TryLock)
	}
	a, fresh := acquiring(current(w), m.lock(), w, read).begin(m)
	if fresh {
		newChain(a.gs, stack.Capture())
	}
	if !try() {
		if err := a.waitContext(ctx, lk); err != nil {
			return err
		}
	}
	a.acquired(skipFromSlowHalf)
	return nil
}

// AssertHeld reports a not-held violation if the calling goroutine does not
// hold m for writing. It checks only in ModeCheck.
func (m *RWMutex) AssertHeld() {
	if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
		if l := m.lock(); !heldBy(gls.Find(goid.ID()), w, l, false) {
			reportNotHeld(goid.ID(), l, false)
		}
	}
}

// AssertRHeld reports a not-held violation if the calling goroutine holds m
// neither for reading nor for writing. It checks only in ModeCheck.
func (m *RWMutex) AssertRHeld() {
	if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
		if l := m.lock(); !heldBy(gls.Find(goid.ID()), w, l, true) {
			reportNotHeld(goid.ID(), l, true)
		}
	}
}
