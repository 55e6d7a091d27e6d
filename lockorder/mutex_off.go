//go:build syncwatch_off

package lockorder

import (
	"context"
	"sync"

	"github.com/syncwatch/syncwatch/internal/mono"
)

// This file is the build with the syncwatch_off tag: every type keeps its
// API, and every method is the sync method it wraps, with nothing added.

// CurrentMode returns ModeOff: the syncwatch_off build tag compiled the
// checks away.
func CurrentMode() Mode { return ModeOff }

// A Mutex is a sync.Mutex; the syncwatch_off build tag removed the checks.
type Mutex struct{ mu sync.Mutex }

// NewMutex returns an unlocked mutex. The class is ignored.
func NewMutex(class string) *Mutex { return new(Mutex) }

// Lock locks m.
func (m *Mutex) Lock() { m.mu.Lock() }

// Unlock unlocks m.
func (m *Mutex) Unlock() { m.mu.Unlock() }

// TryLock tries to lock m.
func (m *Mutex) TryLock() bool { return m.mu.TryLock() }

// LockContext locks m, waiting at most until ctx is done.
func (m *Mutex) LockContext(ctx context.Context) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	if m.mu.TryLock() {
		return nil
	}
	start := mono.Now()
	if lockWithContext(ctx, &m.mu, m.mu.Unlock) {
		return nil
	}
	return &WaitError{Lock: "Mutex", Waited: mono.Since(start), Err: ctx.Err()}
}

// AssertHeld does nothing.
func (m *Mutex) AssertHeld() {}

// An RWMutex is a sync.RWMutex; the syncwatch_off build tag removed the
// checks.
type RWMutex struct{ mu sync.RWMutex }

// NewRWMutex returns an unlocked RWMutex. The class is ignored.
func NewRWMutex(class string) *RWMutex { return new(RWMutex) }

// Lock locks m for writing.
func (m *RWMutex) Lock() { m.mu.Lock() }

// Unlock unlocks m for writing.
func (m *RWMutex) Unlock() { m.mu.Unlock() }

// RLock locks m for reading.
func (m *RWMutex) RLock() { m.mu.RLock() }

// RUnlock undoes one RLock.
func (m *RWMutex) RUnlock() { m.mu.RUnlock() }

// TryLock tries to lock m for writing.
func (m *RWMutex) TryLock() bool { return m.mu.TryLock() }

// TryRLock tries to lock m for reading.
func (m *RWMutex) TryRLock() bool { return m.mu.TryRLock() }

// RLocker returns m's read Locker.
func (m *RWMutex) RLocker() sync.Locker { return m.mu.RLocker() }

// LockContext locks m for writing, waiting at most until ctx is done.
func (m *RWMutex) LockContext(ctx context.Context) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	if m.mu.TryLock() {
		return nil
	}
	start := mono.Now()
	if lockWithContext(ctx, &m.mu, m.mu.Unlock) {
		return nil
	}
	return &WaitError{Lock: "RWMutex", Waited: mono.Since(start), Err: ctx.Err()}
}

// RLockContext locks m for reading, waiting at most until ctx is done.
func (m *RWMutex) RLockContext(ctx context.Context) error {
	if ctx == nil {
		panic("lockorder: LockContext with nil Context")
	}
	if m.mu.TryRLock() {
		return nil
	}
	start := mono.Now()
	if lockWithContext(ctx, m.mu.RLocker(), m.mu.RUnlock) {
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

// syncFastPaths has nothing to keep in step: this build has no fast paths
// of its own, every method is sync's.
func syncFastPaths() {}

// underTest is false: this build has no mode to choose, and does not link
// the testing package to find out.
func underTest() bool { return false }
