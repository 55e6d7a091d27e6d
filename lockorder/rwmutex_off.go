//go:build syncwatch_off

package lockorder

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/internal/rwlock"
)

// RWMutex runs sync.RWMutex's algorithm on the lock the default build uses
// (internal/rwlock): a sync.RWMutex writer cannot withdraw, so a
// LockContext that gave up would hold readers out until the readers in
// had left.

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
