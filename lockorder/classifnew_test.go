//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// SetClassIfNew names an unused lock as SetClass does, so a cycle between
// two such locks names them; on a lock that has an identity (used, or
// named) it does nothing and never panics.
func TestSetClassIfNew(t *testing.T) {
	fresh(t)
	var a, b lockorder.Mutex
	var rw lockorder.RWMutex
	a.SetClassIfNew("ifnew.a")
	b.SetClassIfNew("ifnew.b")
	rw.SetClassIfNew("ifnew.rw")
	run(func() { lockAB(&a, &b) })
	run(func() { lockAB(&b, &rw) })
	run(func() { lockAB(&rw, &a) })

	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	var classes []string
	for _, l := range vs[0].Locks {
		classes = append(classes, l.Class)
	}
	assert.ElementsMatch(t, []string{"ifnew.a", "ifnew.b", "ifnew.rw"}, classes)

	a.SetClassIfNew("another") // named already: kept
	assert.Regexp(t, `^ifnew\.a#\d+$`, nameOf(t, &a))
	var used lockorder.Mutex
	used.Lock()
	used.Unlock()
	first := nameOf(t, &used)
	used.SetClassIfNew("late") // used already: kept
	assert.Equal(t, first, nameOf(t, &used))
}

// Locks named after their declaration (syncwatch test's names): an order
// between two fields of one type holds for every object of the type, so
// two objects, each taking the two in its own order, are a cycle; locks
// of different types are joined by instance, so a tree whose nodes
// alternate two types, each locking its own lock and then its parent's,
// takes outer.mu before inner.mu at one level and inner.mu before
// outer.mu at the next, and is no cycle: no two of these locks were ever
// taken in both orders, and none can be. The same locks inverted are
// reported, by their declarations.
func TestLocksNamedAfterTheirDeclarationAreOrderedByInstance(t *testing.T) {
	fresh(t)
	var mu1, idx1, mu2, idx2 lockorder.Mutex
	for _, m := range []*lockorder.Mutex{&mu1, &mu2} {
		m.SetNameIfNew("store.Store.mu")
	}
	for _, m := range []*lockorder.Mutex{&idx1, &idx2} {
		m.SetNameIfNew("store.Store.idx")
	}
	run(func() { lockAB(&mu1, &idx1) }) // one test's Store
	run(func() { lockAB(&idx2, &mu2) }) // another's
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "two fields of one type, in both orders over two objects")
	assert.Equal(t, "cycle of 2 locks: store.Store.idx -> store.Store.mu -> store.Store.idx", vs[0].Message)

	fresh(t)
	var top, bottom, inner, other lockorder.Mutex
	top.SetNameIfNew("tree.outer.mu")
	bottom.SetNameIfNew("tree.outer.mu")
	inner.SetNameIfNew("tree.inner.mu")
	other.SetNameIfNew("tree.inner.mu")
	run(func() { lockAB(&bottom, &inner) }) // a leaf reports to its parent
	run(func() { lockAB(&inner, &top) })    // which reports to the root
	run(func() { lockAB(&other, &top) })
	assert.Empty(t, only(lockorder.KindCycle), "instances in fixed roles: no lock taken in both orders")

	run(func() { lockAB(&top, &inner) }) // the root calls down: top, inner in both orders
	vs = only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Equal(t, "cycle of 2 locks: tree.inner.mu -> tree.outer.mu -> tree.inner.mu", vs[0].Message)
	var names, classes []string
	for _, l := range vs[0].Locks {
		names, classes = append(names, l.Name), append(classes, l.Class)
	}
	assert.ElementsMatch(t, []string{"tree.outer.mu#1", "tree.inner.mu#1"}, names, "each instance has a name of its own")
	assert.ElementsMatch(t, []string{"tree.outer.mu", "tree.inner.mu"}, classes)

	// Two locks of one declaration in both orders are told apart.
	fresh(t)
	var x, y lockorder.Mutex
	x.SetNameIfNew("bank.Account.mu")
	y.SetNameIfNew("bank.Account.mu")
	run(func() { lockAB(&x, &y) })
	run(func() { lockAB(&y, &x) })
	vs = only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Regexp(t, `cycle of 2 locks: bank\.Account\.mu#\d+ -> bank\.Account\.mu#\d+ -> `, vs[0].Message)

	// A lock with an identity keeps it; an RWMutex is named alike.
	x.SetNameIfNew("another")
	assert.Regexp(t, `^bank\.Account\.mu#\d+$`, nameOf(t, &x))
	var used lockorder.Mutex
	used.Lock()
	used.Unlock()
	first := nameOf(t, &used)
	used.SetNameIfNew("late")
	assert.Equal(t, first, nameOf(t, &used))
	var rw lockorder.RWMutex
	rw.SetNameIfNew("cache.rw")
	rw.Lock()
	held := lockorder.HeldLocks()
	rw.Unlock()
	require.Len(t, held, 1)
	assert.Regexp(t, `^cache\.rw#\d+$`, held[0].Name)
}
