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
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		nodes, edges = lockorder.GraphSize()
		if nodes <= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
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
	for range 3 {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	// The class-level edge outlives the instances: a later inversion
	// between new instances of the same classes is still caught.
	c, d := lockorder.NewMutex("stayA"), lockorder.NewMutex("stayB")
	run(func() { lockAB(d, c) })
	assert.Len(t, only(lockorder.KindCycle), 1)
}
