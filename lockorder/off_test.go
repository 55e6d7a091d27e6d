//go:build syncwatch_off

package lockorder_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

// With -tags syncwatch_off the types are plain sync locks: they lock, and
// nothing is checked or recorded.
func TestOffBuildIsPlainSync(t *testing.T) {
	if lockorder.CurrentMode() != lockorder.ModeOff {
		t.Fatalf("mode %v", lockorder.CurrentMode())
	}
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) // accepted, changes nothing
	a, b := lockorder.NewMutex("A"), lockorder.NewMutex("B")
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
	b.Lock()
	a.Lock()
	a.Unlock()
	b.Unlock()
	a.AssertHeld()
	if len(lockorder.Violations()) != 0 || lockorder.HeldLocks() != nil {
		t.Fatal("the off build recorded something")
	}
	var rw lockorder.RWMutex
	rw.RLock()
	if rw.TryLock() {
		t.Fatal("TryLock succeeded on a read-locked RWMutex")
	}
	rw.RUnlock()

	a.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	err := a.LockContext(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, lockorder.ErrWaitAbandoned) {
		t.Fatalf("LockContext = %v", err)
	}
	a.Unlock()
	if testing.AllocsPerRun(100, func() { a.Lock(); a.Unlock() }) != 0 {
		t.Fatal("Lock allocates")
	}
}

// fresh is main_test.go's for the tests shared by both builds: the off
// build keeps nothing to reset.
func fresh(t *testing.T) { t.Helper() }

// The off build keeps LockContext's promise too (see rwcontext_test.go).
func TestOffCancelledWriteLeavesReadersIn(t *testing.T) { checkCancelledWriteLeavesReadersIn(t) }

func TestOffCancelledReadLeavesNothing(t *testing.T) { checkCancelledReadLeavesNothing(t) }

func TestOffCancelStress(t *testing.T) { checkCancelStress(t) }

func TestOffNoPhantomHolder(t *testing.T) { checkNoPhantomHolder(t) }

func TestOffContextDifferential(t *testing.T) { checkContextDifferential(t) }

func TestOffLockContextInBubbleTimesOut(t *testing.T) { checkLockContextInBubbleTimesOut(t) }

func TestOffLockContextInBubbleSucceeds(t *testing.T) { checkLockContextInBubbleSucceeds(t) }

// SetClass keeps its place in a constructor, and does nothing.
func TestOffSetClassDoesNothing(t *testing.T) {
	var m lockorder.Mutex
	var rw lockorder.RWMutex
	m.SetClass("off")
	rw.SetClass("off")
	m.Lock()
	m.Unlock()
	m.SetClass("another") // would panic in the default build
	rw.SetClass("another")
}
