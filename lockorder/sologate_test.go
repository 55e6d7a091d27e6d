//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A log closed for good: its Close locks the file lock and never
// unlocks it, by design, so that later writes fail fast. The goroutine
// that closed it goes on to run the service's three handlers, each
// taking two of a, b and c: three goroutines would deadlock running
// them at once. Every edge of the cycle was seen under the file lock,
// but that lock is no critical section around them: no other goroutine
// ever took it (rule R-SOLO), and the cycle is reported.
func TestNeverReleasedLockGatesNothing(t *testing.T) {
	fresh(t)
	file := lockorder.NewMutex("solo-logfile")
	a, b, c := lockorder.NewMutex("solo-a"), lockorder.NewMutex("solo-b"), lockorder.NewMutex("solo-c")
	run(func() {
		file.Lock() // closed for good
		lockAB(a, b)
		lockAB(b, c)
		lockAB(c, a)
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "the three-lock cycle is reported")
	assert.Len(t, vs[0].Cycle, 3)
	file.Unlock()
}

// The same shape with the never-released lock around two of the three
// edges (the pair rule): the third handler runs in a goroutine of its
// own, and the cycle is reported.
func TestNeverReleasedLockPairsNothing(t *testing.T) {
	fresh(t)
	file := lockorder.NewMutex("solo2-logfile")
	a, b, c := lockorder.NewMutex("solo2-a"), lockorder.NewMutex("solo2-b"), lockorder.NewMutex("solo2-c")
	run(func() {
		file.Lock()
		lockAB(a, b)
		lockAB(c, a)
	})
	run(func() { lockAB(b, c) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Len(t, vs[0].Cycle, 3)
	file.Unlock()
}

// A gate lock that several goroutines take around their critical
// sections still holds the cycle back: each handler takes it, in a
// goroutine of its own, and the three cannot wait at once.
func TestGateTakenByManyGoroutinesHoldsBack(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex("solo3-gate")
	a, b, c := lockorder.NewMutex("solo3-a"), lockorder.NewMutex("solo3-b"), lockorder.NewMutex("solo3-c")
	gated := func(x, y *lockorder.Mutex) func() {
		return func() {
			g.Lock()
			lockAB(x, y)
			g.Unlock()
		}
	}
	run(gated(a, b))
	run(gated(b, c))
	run(gated(c, a))
	assert.Empty(t, lockorder.Violations(), "every edge under a gate three goroutines took")

	// The same two-goroutine pair: the pair rule holds it back.
	fresh(t)
	g = lockorder.NewMutex("solo4-gate")
	a, b, c = lockorder.NewMutex("solo4-a"), lockorder.NewMutex("solo4-b"), lockorder.NewMutex("solo4-c")
	run(func() {
		g.Lock()
		lockAB(a, b)
		lockAB(c, a)
		g.Unlock()
	})
	run(func() { g.Lock(); g.Unlock(); lockAB(b, c) })
	assert.Empty(t, lockorder.Violations(), "two edges under one gate two goroutines took")
}
