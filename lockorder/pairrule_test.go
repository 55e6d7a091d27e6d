//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/syncwatch/syncwatch/lockorder"
)

// Two edges of a real 3-cycle hold two instances of one class in their
// gates: distinct locks, the pair rule must not apply.
func TestPairRuleDifferentInstancesInGates(t *testing.T) {
	fresh(t)
	g1, g2 := lockorder.NewMutex("rv-acct"), lockorder.NewMutex("rv-acct")
	a, b, c := lockorder.NewMutex("rv-a"), lockorder.NewMutex("rv-b"), lockorder.NewMutex("rv-c")
	run(func() {
		g1.Lock()
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
		g1.Unlock()
	})
	run(func() {
		g2.Lock()
		b.Lock()
		c.Lock()
		c.Unlock()
		b.Unlock()
		g2.Unlock()
	})
	run(func() { c.Lock(); a.Lock(); a.Unlock(); c.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// Src of one edge and the gate of another are different instances of one
// class: G1 holds a1 waits b; G2 holds a2,b waits c; G3 holds c waits a1.
func TestPairRuleSrcAndGateOtherInstances(t *testing.T) {
	fresh(t)
	a1, a2 := lockorder.NewMutex("rv2-a"), lockorder.NewMutex("rv2-a")
	b, c := lockorder.NewMutex("rv2-b"), lockorder.NewMutex("rv2-c")
	run(func() { a1.Lock(); b.Lock(); b.Unlock(); a1.Unlock() })
	run(func() {
		a2.Lock()
		b.Lock()
		c.Lock()
		c.Unlock()
		b.Unlock()
		a2.Unlock()
	})
	run(func() { c.Lock(); a1.Lock(); a1.Unlock(); c.Unlock() })
	assert.NotEmpty(t, only(lockorder.KindCycle))
}

// RWMutex: two edges read-holding one instance may both wait.
func TestPairRuleReadHoldsNotExclusive(t *testing.T) {
	fresh(t)
	g := lockorder.NewRWMutex("rv3-g")
	a, b, c := lockorder.NewMutex("rv3-a"), lockorder.NewMutex("rv3-b"), lockorder.NewMutex("rv3-c")
	g.Lock()
	g.Unlock()
	run(func() {
		g.RLock()
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
		g.RUnlock()
	})
	run(func() {
		g.RLock()
		b.Lock()
		c.Lock()
		c.Unlock()
		b.Unlock()
		g.RUnlock()
	})
	run(func() { c.Lock(); a.Lock(); a.Unlock(); c.Unlock() })
	assert.NotEmpty(t, only(lockorder.KindCycle))
}
