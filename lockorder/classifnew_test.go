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
