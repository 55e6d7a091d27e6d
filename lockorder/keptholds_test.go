//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Rule R24: a lock its goroutine kept until it exited (a file locked for
// good on close) is no evidence that the paths taken under it exclude
// each other. Once the exit check sees that goroutine gone, the lock
// holds no cycle back.

// keepUntilExit runs f in a goroutine that locks g first and exits
// without unlocking it, and returns once the exit check has seen g left
// held by the exited goroutine.
func keepUntilExit(t *testing.T, g *lockorder.Mutex, name string, f func()) {
	t.Helper()
	run(func() {
		g.Lock()
		f()
	})
	for range 2000 { // until the goroutine is gone from the dump
		lockorder.ReportBlocked(0)
		for _, v := range only(lockorder.KindHeldByExited) {
			if len(v.Locks) > 0 && v.Locks[0].Class == name {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the exit check never saw the goroutine that kept g exit")
}

// The database shape: a worker orders b -> a under the database's lock g
// and releases it; a closing goroutine keeps g for good, then orders
// a -> b. The cycle is held back while the closer lives, and reported once
// it has exited holding g.
func TestAGateKeptUntilExitHoldsNoCycleBack(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24-a"), lockorder.NewMutex("r24-b")
	run(func() {
		g.Lock()
		lockAB(b, a)
		g.Unlock()
	})
	keepUntilExit(t, g, t.Name(), func() {
		lockAB(a, b)
		require.Empty(t, only(lockorder.KindCycle), "held back while g's holder lives")
	})
	cycles := only(lockorder.KindCycle)
	require.Len(t, cycles, 1, "a gate kept until exit holds the a/b cycle back")
	assert.Contains(t, cycles[0].Message, "r24-a")
	runtime.KeepAlive(g)
}

// One goroutine takes both orders under a lock it keeps until it exits:
// nobody else ever contends for g, so g is no gate.
func TestAGateNobodyContendsForHoldsNoCycleBack(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24s-a"), lockorder.NewMutex("r24s-b")
	keepUntilExit(t, g, t.Name(), func() {
		lockAB(a, b)
		lockAB(b, a)
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
	runtime.KeepAlive(g)
}

// The control, the commonest test there is: a transaction lock taken and
// released around each order is a gate, and stays one at exit.
func TestAGateReleasedByItsTakerStaysAGateAtExit(t *testing.T) {
	fresh(t)
	g, other := lockorder.NewMutex(t.Name()), lockorder.NewMutex(t.Name()+"-other")
	a, b := lockorder.NewMutex("r24c-a"), lockorder.NewMutex("r24c-b")
	run(func() {
		g.Lock()
		lockAB(a, b)
		g.Unlock()
		g.Lock()
		lockAB(b, a)
		g.Unlock()
	})
	keepUntilExit(t, other, t.Name()+"-other", func() {}) // an exit check that saw a kept lock
	assert.Empty(t, only(lockorder.KindCycle))
	runtime.KeepAlive(g)
	runtime.KeepAlive(other)
}

// The writers' gate (R7): two RWMutexes written only under g, read in
// both orders. One writer at a time cannot deadlock readers against each
// other; once g turns out kept until exit, its writers are not
// serialized by anything, and the read cycle is reported.
func TestAWritersGateKeptUntilExitHoldsNoReadCycleBack(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	x, y := lockorder.NewRWMutex("r24w-x"), lockorder.NewRWMutex("r24w-y")
	run(func() {
		x.RLock()
		y.RLock()
		y.RUnlock()
		x.RUnlock()
	})
	run(func() {
		y.RLock()
		x.RLock()
		x.RUnlock()
		y.RUnlock()
	})
	keepUntilExit(t, g, t.Name(), func() {
		x.Lock()
		x.Unlock()
		y.Lock()
		y.Unlock()
		require.Empty(t, only(lockorder.KindCycle), "every write so far holds g")
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
	runtime.KeepAlive(g)
}
