//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A tree of balancers whose levels alternate two types, as gRPC's
// balancer tree does: each node, told of a change, updates itself under
// its own lock and tells its parent under it, which locks its own. The
// classes of the two types make a cycle, switcher -> aggregator ->
// switcher, yet no lock is ever taken on both sides of another: a node's
// parent is never its child (docs/RULES.md R26).
type roleNode struct {
	mu     *lockorder.Mutex
	parent *roleNode
}

// update locks n, then tells its parent, which does the same.
//
//go:noinline
func (n *roleNode) update() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.parent != nil {
		n.parent.update()
	}
}

// roleTree builds root <- switcher <- aggregator <- switcher, the levels
// alternating the two classes, and returns its leaf.
func roleTree() *roleNode {
	root := &roleNode{mu: lockorder.NewMutex("roles.aggregator")}
	s1 := &roleNode{mu: lockorder.NewMutex("roles.switcher"), parent: root}
	a2 := &roleNode{mu: lockorder.NewMutex("roles.aggregator"), parent: s1}
	return &roleNode{mu: lockorder.NewMutex("roles.switcher"), parent: a2}
}

func TestATreeOfTwoTypesInFixedRolesIsNoCycle(t *testing.T) {
	fresh(t)
	for range 3 { // trees come and go, as tests make them
		leaf := roleTree()
		run(leaf.update)
		run(leaf.parent.update)
	}
	require.Empty(t, only(lockorder.KindCycle))
}

// The same tree, and code that locks a parent, then its child: those two
// locks are taken in both orders, which can deadlock.
func TestATreeWhoseLocksAreTakenBothWaysIsACycle(t *testing.T) {
	fresh(t)
	leaf := roleTree()
	run(leaf.update)
	mid := leaf.parent // an aggregator, under a switcher
	run(func() {
		mid.parent.mu.Lock()
		mid.mu.Lock()
		mid.mu.Unlock()
		mid.parent.mu.Unlock()
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	require.Len(t, vs[0].Cycle, 2)
}

// A tree whose nodes hold their own lock for reading when they tell the
// parent: the engine knows the edges into a named class by the class
// there (R2's chain key), so not every pair of locks is seen, and the
// class cycle is reported as before R26.
func TestATreeUnderReadHoldsIsReportedAsAClassCycle(t *testing.T) {
	fresh(t)
	root := lockorder.NewRWMutex("roles.rw.aggregator")
	s1 := lockorder.NewRWMutex("roles.rw.switcher")
	a2 := lockorder.NewRWMutex("roles.rw.aggregator")
	for _, l := range []*lockorder.RWMutex{root, s1, a2} {
		l.Lock() // written: read edges into them can block (R4)
		l.Unlock()
	}
	run(func() {
		s1.RLock()
		root.Lock()
		root.Unlock()
		s1.RUnlock()
	})
	run(func() {
		a2.RLock()
		s1.Lock()
		s1.Unlock()
		a2.RUnlock()
	})
	require.Len(t, only(lockorder.KindCycle), 1)
}

// An acquisition made holding too many locks to record edges (R25)
// leaves its pairs of locks unseen: R26 then holds nothing back, and a
// tree's class cycle it held back is reported.
func TestAnAcquisitionTooDeepToRecordEndsTheRolesRule(t *testing.T) {
	fresh(t)
	leaf := roleTree()
	run(leaf.update)
	require.Empty(t, only(lockorder.KindCycle), "held back by R26")
	run(func() {
		locks := make([]lockorder.Mutex, 257)
		for i := range locks {
			locks[i].Lock()
		}
		for i := len(locks) - 1; i >= 0; i-- {
			locks[i].Unlock()
		}
	})
	require.Len(t, only(lockorder.KindCycle), 1)
}
