//go:build syncwatch_off

package lockorder

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/internal/syncword"
)

// This file and the other *_off.go files are the build with the
// syncwatch_off tag, each named after the default build's file it stands
// in for: every type keeps its API and nothing is checked or recorded.
// Mutex's methods are sync.Mutex's, but for Unlock: it does sync's
// uncontended compare-and-swap itself, as the default build does, and
// otherwise releases through internal/ctxwait, where a LockContext waits
// beside sync's queue (see fastpath_off.go).

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

// HeldLocks returns nil: nothing is tracked.
func HeldLocks() []LockRef { return nil }
