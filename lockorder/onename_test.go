//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// inversionAfter runs the inversion of pool's acquire and release on two
// pools, one whose fields acquire locks first and one whose busy stats
// locks first, the stats pool first if statsFirst, and returns the one
// report and what the handler printed.
func inversionAfter(t *testing.T, statsFirst bool) (lockorder.Violation, []lockorder.Violation) {
	t.Helper()
	fresh(t)
	var printed []lockorder.Violation
	lockorder.Configure(lockorder.WithHandler(func(v lockorder.Violation) { printed = append(printed, v) }))
	viaAcquire := func() {
		p := &pool{}
		run(p.acquire) // free and busy first locked by acquire
		run(p.release)
	}
	viaStats := func() {
		p := &pool{}
		run(p.stats) // busy first locked by stats
		run(p.release)
		run(p.acquire)
	}
	if statsFirst {
		viaStats()
		viaAcquire()
	} else {
		viaAcquire()
		viaStats()
	}
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "one inversion in the code, one report")
	return vs[0], printed
}

// One lock, one name: the inversion between pool's two fields, reached
// on one pool through acquire first and on another through stats, is
// one report, printed once, whose message names the locks alike
// whichever pool came first: by the code that took them in the cycle,
// not by the function that first locked an instance.
func TestOneInversionOneNameWhicheverPathFirst(t *testing.T) {
	v1, printed1 := inversionAfter(t, false)
	v2, printed2 := inversionAfter(t, true)
	t.Log(v1.Message)
	assert.Equal(t, v1.Message, v2.Message, "the names do not depend on which path came first")
	assert.Equal(t, v1.Key, v2.Key)
	assert.Equal(t, 2, v1.Instances)
	assert.Equal(t, 2, v2.Instances)
	require.Len(t, printed1, 1)
	require.Len(t, printed2, 1)
	assert.Equal(t, v1.Message, printed1[0].Message)
	assert.Equal(t, v2.Message, printed2[0].Message)
	assert.NotContains(t, v1.Message, "#", "no instance number: it depends on the order of first use")
	assert.NotContains(t, v1.Message, "stats", "stats takes no lock of the cycle")
}

// gauge has one RWMutex field, which read misuses.
type gauge struct {
	mu lockorder.RWMutex
	v  int
}

func (g *gauge) set(v int) {
	g.mu.Lock()
	g.v = v
	g.mu.Unlock()
}

func (g *gauge) peek() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.v
}

// read read-locks g twice: the misuse, at one place.
func (g *gauge) read() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.v
}

// One bug, one report: the same recursive read lock of one field, on a
// gauge that set locked first and on one that peek locked first, is one
// report of two instances.
func TestOneMisuseWhicheverFunctionLockedFirst(t *testing.T) {
	fresh(t)
	g1, g2 := &gauge{}, &gauge{}
	g1.set(1)
	g2.peek()
	for _, g := range []*gauge{g1, g2} {
		g.read() // one stack: the reports differ only in who locked first
	}
	vs := only(lockorder.KindRecursiveRLock)
	require.Len(t, vs, 1, "one misuse in the code, one report")
	assert.Equal(t, 2, vs[0].Instances)
}
