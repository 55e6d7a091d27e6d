//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// allModes runs f in each mode, restoring ModeCheck after.
func allModes(t *testing.T, f func(t *testing.T)) {
	for _, m := range []lockorder.Mode{lockorder.ModeOff, lockorder.ModeTrace, lockorder.ModeCheck} {
		t.Run(m.String(), func(t *testing.T) {
			fresh(t)
			lockorder.Configure(lockorder.WithMode(m))
			t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
			f(t)
		})
	}
}

func TestCancelledWriteLeavesReadersIn(t *testing.T) { allModes(t, checkCancelledWriteLeavesReadersIn) }

func TestCancelledReadLeavesNothing(t *testing.T) { allModes(t, checkCancelledReadLeavesNothing) }

func TestCancelStress(t *testing.T) { allModes(t, checkCancelStress) }

func TestNoPhantomHolder(t *testing.T) { allModes(t, checkNoPhantomHolder) }

func TestLockContextInBubbleTimesOut(t *testing.T) { allModes(t, checkLockContextInBubbleTimesOut) }

func TestLockContextInBubbleSucceeds(t *testing.T) { allModes(t, checkLockContextInBubbleSucceeds) }

func TestContextDifferential(t *testing.T) { allModes(t, checkContextDifferential) }
