//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

//go:noinline
func churn(long *lockorder.Mutex, n int) {
	for range n {
		m := new(lockorder.Mutex)
		long.Lock()
		m.Lock()
		m.Unlock()
		long.Unlock()
	}
}

func TestDeadMutexesLeaveTheGraph(t *testing.T) {
	fresh(t)
	long := lockorder.NewMutex("long-lived")
	churn(long, 5000)
	nodes, edges := lockorder.GraphSize()
	require.Greater(t, nodes, 1)
	require.Equal(t, nodes-1, edges)

	// Cleanups run after a GC, on another goroutine.
	pollBusy(func() bool {
		runtime.GC()
		nodes, edges = lockorder.GraphSize()
		return nodes <= 1
	})
	assert.LessOrEqual(t, nodes, 1, "only the named class stays")
	assert.Zero(t, edges)
	assert.Empty(t, lockorder.Violations())
}

func TestNamedClassesStay(t *testing.T) {
	fresh(t)
	func() {
		a, b := lockorder.NewMutex("stayA"), lockorder.NewMutex("stayB")
		run(func() { lockAB(a, b) })
	}()
	require.True(t, collectUntil(func() bool { return lockorder.ClassDormant("stayA") && lockorder.ClassDormant("stayB") }),
		"the instances are collected: their classes are dormant")
	// The class-level edge outlives the instances: a later inversion
	// between new instances of the same classes is still caught.
	c, d := lockorder.NewMutex("stayA"), lockorder.NewMutex("stayB")
	run(func() { lockAB(d, c) })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// collectUntil runs the garbage collector until cond holds, for pollLimit
// at most, and reports whether it did. Cleanups run after a collection,
// on a goroutine of their own.
func collectUntil(cond func() bool) bool {
	return pollBusy(func() bool { runtime.GC(); return cond() })
}

// settledClasses collects until the number of named classes stops
// falling, so that what earlier tests dropped is gone, and returns it.
// Nothing signals that the cleanups of earlier tests have all run: it
// waits for the count to stay put over three collections 5ms apart. A
// slow machine can only make the count it returns higher, and the tests
// that compare with it more lenient, not fail.
func settledClasses() int {
	last, same := -1, 0
	for range 300 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // time for the cleanups, which no event reports
		n := lockorder.NamedClasses()
		if n != last {
			last, same = n, 0
		} else if same++; same == 3 {
			break
		}
	}
	return last
}

//go:noinline
func churnNamed(long *lockorder.Mutex, prefix string, n int) {
	for i := range n {
		m := lockorder.NewMutex(fmt.Sprintf("%s-%d", prefix, i))
		long.Lock()
		m.Lock()
		m.Unlock()
		long.Unlock()
	}
}

// A class per connection ("conn-%d") is freed with its mutex: named
// classes do not pile up.
func TestNamedMutexesDoNotPileUp(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	long := lockorder.NewMutex("pileup-long")
	base := settledClasses()
	churnNamed(long, "conn", 100_000)
	assert.True(t, collectUntil(func() bool { return lockorder.NamedClasses() <= base }),
		"%d named classes left, %d before", lockorder.NamedClasses(), base)
	runtime.KeepAlive(long)
}

// In ModeCheck a class the graph knows of outlives its mutexes, so that a
// later mutex of that name finds what was learnt (TestNamedClassesStay),
// but only so many of them: past MaxDormantClasses the oldest are freed,
// nodes and all, and Reset frees the rest.
func TestNamedClassesTheGraphKeepsAreBounded(t *testing.T) {
	fresh(t)
	long := lockorder.NewMutex("bounded-long")
	base := settledClasses()
	const n = lockorder.MaxDormantClasses + 1000
	churnNamed(long, "graphconn", n)
	// A node per class, less those a collection during the churn already
	// let go of.
	nodes, _ := lockorder.GraphSize()
	require.LessOrEqual(t, nodes, n+1)
	require.Greater(t, nodes, lockorder.MaxDormantClasses, "the churn made more classes than are kept")

	kept := base + lockorder.MaxDormantClasses
	assert.True(t, collectUntil(func() bool { return lockorder.NamedClasses() <= kept }),
		"%d named classes left, want at most %d", lockorder.NamedClasses(), kept)
	nodes, edges := lockorder.GraphSize()
	assert.LessOrEqual(t, nodes, lockorder.MaxDormantClasses+1)
	assert.Equal(t, nodes-1, edges)

	lockorder.Reset()
	assert.True(t, collectUntil(func() bool { return lockorder.NamedClasses() <= base }),
		"%d named classes left after Reset, %d before", lockorder.NamedClasses(), base)
	assert.Empty(t, lockorder.Violations())
	runtime.KeepAlive(long)
}
