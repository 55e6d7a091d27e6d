//go:build syncwatch_off

package lockorder

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/internal/rwlock"
	"github.com/syncwatch/syncwatch/internal/syncword"
)

// This file is the build with the syncwatch_off tag: every type keeps its
// API and nothing is checked or recorded. Mutex's methods are sync.Mutex's,
// but for Unlock: it does sync's uncontended compare-and-swap itself, as
// the default build does, and otherwise releases through internal/ctxwait,
// where a LockContext waits beside sync's queue.
// RWMutex runs sync.RWMutex's algorithm on the lock the default build uses
// (internal/rwlock), for the same reason: a sync.RWMutex writer cannot
// withdraw, so a LockContext that gave up would hold readers out until the
// readers in had left.

// CurrentMode returns ModeOff: the syncwatch_off build tag compiled the
// checks away.
func CurrentMode() Mode { return ModeOff }

// A Mutex is a sync.Mutex; the syncwatch_off build tag removed the checks.
type Mutex struct{ mu sync.Mutex }

// NewMutex returns an unlocked mutex. The class is ignored.
func NewMutex(class string) *Mutex { return new(Mutex) }

// SetClass does nothing: the syncwatch_off build tag removed the classes.
func (m *Mutex) SetClass(name string) {}

// Lock locks m.
func (m *Mutex) Lock() { m.mu.Lock() }

// Unlock unlocks m.
func (m *Mutex) Unlock() {
	if atomic.LoadUint32(&fastOff) == 0 && atomic.CompareAndSwapInt32(syncword.State(&m.mu), syncword.Locked, 0) {
		return // sync's own fast path, inlined as sync's is
	}
	m.unlockSlow()
}

// unlockSlow is Unlock past its fast path: sync's Unlock, through
// ctxwait, where a LockContext may wait for m. Kept out of line so that
// Unlock inlines.
//
//go:noinline
func (m *Mutex) unlockSlow() { unlockSync(&m.mu) }

// TryLock tries to lock m.
func (m *Mutex) TryLock() bool { return m.mu.TryLock() }

// LockContext locks m, waiting at most until ctx is done. If it gives up,
// m is left as it was: nothing holds or takes m on its behalf afterwards.
func (m *Mutex) LockContext(ctx context.Context) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	if m.mu.TryLock() {
		return nil
	}
	start := mono.Now()
	if lockWithContext(ctx, (*ctxMutex)(&m.mu)) {
		return nil
	}
	return &WaitError{Lock: "Mutex", Waited: mono.Since(start), Err: ctx.Err()}
}

// AssertHeld does nothing.
func (m *Mutex) AssertHeld() {}

// An RWMutex is a reader/writer lock with sync.RWMutex's algorithm and
// meaning; the syncwatch_off build tag removed the checks. Its uncontended
// RLock and RUnlock are one atomic add inlined into the caller, as
// sync's are. As with sync, RUnlock or Unlock of an RWMutex not so locked
// is a fatal error; the message starts "fatal error: lockorder:".
type RWMutex struct{ mu rwlock.RWMutex }

// NewRWMutex returns an unlocked RWMutex. The class is ignored.
func NewRWMutex(class string) *RWMutex { return new(RWMutex) }

// SetClass does nothing: the syncwatch_off build tag removed the classes.
func (m *RWMutex) SetClass(name string) {}

// Lock locks m for writing.
func (m *RWMutex) Lock() { m.mu.Lock() }

// Unlock unlocks m for writing.
func (m *RWMutex) Unlock() {
	if !m.mu.Unlock() {
		fatal("lockorder: Unlock of unlocked RWMutex")
	}
}

// RLock locks m for reading.
func (m *RWMutex) RLock() {
	if rwlock.RaceEnabled {
		m.mu.RLock()
		return
	}
	if r := atomic.AddInt64(m.mu.Readers(), 1); r < 0 {
		m.mu.WaitReader(r)
	}
}

// RUnlock undoes one RLock.
func (m *RWMutex) RUnlock() {
	if rwlock.RaceEnabled {
		m.mu.ReaderOut()
		m.runlockSlow(m.mu.AddReader(-1))
		return
	}
	if r := atomic.AddInt64(m.mu.Readers(), -1); r < 0 {
		m.runlockSlow(r)
	}
}

// runlockSlow finishes an RUnlock whose add to the reader count returned r.
func (m *RWMutex) runlockSlow(r int64) {
	if r < 0 && !m.mu.ReaderLeft(r) {
		fatal("lockorder: RUnlock of unlocked RWMutex")
	}
}

// TryLock tries to lock m for writing.
func (m *RWMutex) TryLock() bool { return m.mu.TryLock() }

// TryRLock tries to lock m for reading.
func (m *RWMutex) TryRLock() bool { return m.mu.TryRLock() }

// RLocker returns a Locker whose Lock and Unlock call m.RLock and
// m.RUnlock.
func (m *RWMutex) RLocker() sync.Locker { return (*rlocker)(m) }

type rlocker RWMutex

func (r *rlocker) Lock()   { (*RWMutex)(r).RLock() }
func (r *rlocker) Unlock() { (*RWMutex)(r).RUnlock() }

// LockContext locks m for writing, waiting at most until ctx is done. If
// it gives up, m is left as it was.
func (m *RWMutex) LockContext(ctx context.Context) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	if m.mu.TryLock() {
		return nil
	}
	start := mono.Now()
	if lockWithContext(ctx, (*rwlock.Writer)(&m.mu)) {
		return nil
	}
	return &WaitError{Lock: "RWMutex", Waited: mono.Since(start), Err: ctx.Err()}
}

// RLockContext locks m for reading, waiting at most until ctx is done. If
// it gives up, m is left as it was.
func (m *RWMutex) RLockContext(ctx context.Context) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	if m.mu.TryRLock() {
		return nil
	}
	start := mono.Now()
	if lockWithContext(ctx, (*rwlock.Reader)(&m.mu)) {
		return nil
	}
	return &WaitError{Lock: "RWMutex", Waited: mono.Since(start), Err: ctx.Err()}
}

// AssertHeld does nothing.
func (m *RWMutex) AssertHeld() {}

// AssertRHeld does nothing.
func (m *RWMutex) AssertRHeld() {}

// Report does nothing.
func Report(v Violation) {}

// ReportContext does nothing.
func ReportContext(ctx context.Context, v Violation) {}

// Violations returns nil.
func Violations() []Violation { return nil }

// Reset does nothing.
func Reset() {}

// HeldLocks returns nil: nothing is tracked.
func HeldLocks() []LockRef { return nil }

// fastOff is 0 when Unlock may stop after its inlined compare-and-swap,
// as in the default build (fastpath.go): its low bit is set unless sync's
// layout is verified, and above it it counts the LockContext calls
// waiting for a Mutex, whose releases must take the slow half. Lock needs
// none: it is sync's.
var fastOff uint32 = fastOffMode

// layoutOK says whether the fast path may read sync's state word.
var layoutOK = syncword.Verify()

const (
	fastOffMode = 1 // set while sync's layout is not verified
	fastOffCtx  = 2 // added per waiting LockContext
)

func init() {
	if layoutOK {
		atomic.AndUint32(&fastOff, ^uint32(fastOffMode))
	}
}

// ctxWaitBegin turns Unlock's fast path off for a LockContext about to
// wait, and ctxWaitEnd undoes it; see fastpath.go.
func ctxWaitBegin() { atomic.AddUint32(&fastOff, fastOffCtx) }

func ctxWaitEnd() { atomic.AddUint32(&fastOff, ^uint32(fastOffCtx-1)) }

// syncFastPaths has nothing to keep in step: this build has no fast paths
// of its own, every method is sync's.
func syncFastPaths() {}

// forgetWriters has no writes to forget: nothing is checked.
func forgetWriters() {}

// underTest is false: this build has no mode to choose, and does not link
// the testing package to find out.
func underTest() bool { return false }
