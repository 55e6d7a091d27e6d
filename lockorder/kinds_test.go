//go:build !syncwatch_off

package lockorder_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/lockorder"
)

// The rules that let a write hold hold a cycle back (RULES.md R6 to R10,
// R18) assume the hold has one holder. A primitive whose kind is not
// exclusive, taking the lock path as a counting semaphore modelled on
// Mutex would, reaches none of them: each scenario below is held back
// when its gate lock is of an exclusive kind, and reported when it is not.

// The common gate (R6): a 2-cycle whose edges are both taken under g.
func TestOnlyAnExclusiveKindIsACommonGate(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind.Kind, n string) {
		g := lockorder.NewMutexOfKind(n+"-g", k)
		a, b := lockorder.NewMutex(n+"-a"), lockorder.NewMutex(n+"-b")
		run(under(g, a, b))
		run(under(g, b, a))
		assert.Equal(t, !k.Exclusive(), hasCycle("cycle of 2 locks"), "both edges under g")
	})
}

// The pair rule (R9): in the 3-cycle a -> b -> c -> a two edges are
// taken under g, the third without: no common gate, but a pair.
func TestOnlyAnExclusiveKindHoldsBackAPair(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind.Kind, n string) {
		g := lockorder.NewMutexOfKind(n+"-g", k)
		a, b, c := lockorder.NewMutex(n+"-a"), lockorder.NewMutex(n+"-b"), lockorder.NewMutex(n+"-c")
		run(under(g, a, b))
		run(under(g, b, c))
		run(func() { lockAB(c, a) })
		assert.Equal(t, !k.Exclusive(), hasCycle("cycle of 3 locks"), "two edges hold g")
	})
}

// The writers' gate (R7): every write of y is made under g, and so is
// every edge of the read cycle x -> y(read) -> x but the reader's.
func TestOnlyAnExclusiveKindIsAWritersGate(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind.Kind, n string) {
		g, x, y := lockorder.NewMutexOfKind(n+"-g", k), lockorder.NewMutex(n+"-x"), lockorder.NewRWMutex(n+"-y")
		gatedCycle(g, x, y)
		assert.Equal(t, !k.Exclusive(), hasCycle(n+"-x -> "+n+"-y"), "every writer of y holds g")
	})
}

// The ∃ rule (R8): every write of mmap is made under rw, and one edge of
// the cycle meta -> mmap(read) -> rw -> meta holds rw (as its From).
func TestOnlyAnExclusiveKindHoldsBackByOneEdge(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind.Kind, n string) {
		rw, meta, mmap := lockorder.NewMutexOfKind(n+"-rw", k), lockorder.NewMutex(n+"-meta"), lockorder.NewRWMutex(n+"-mmap")
		bboltCycle(t, rw, meta, mmap, nil)
		assert.Equal(t, !k.Exclusive(), hasCycle("cycle of 3 locks: "+n+"-meta -> "+n+"-mmap -> "+n+"-rw"),
			"a writer of mmap holds rw")
	})
}

// R-RW (R18): the table held for writing around one edge and for reading
// around the other, for the kinds that can be held for reading.
func TestOnlyAnExclusiveKindExcludesReadFromWrite(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind.Kind, n string) {
		if !k.Readable() {
			t.Skipf("a %v has no read holds", k)
		}
		r := &registry{
			table:   lockorder.NewRWMutexOfKind(n+"-table", k),
			session: lockorder.NewMutex(n + "-session"),
			stat:    lockorder.NewMutex(n + "-stats"),
		}
		run(r.closeAll)
		run(r.handle)
		run(r.handle)
		assert.Equal(t, !k.Exclusive(), hasCycle("cycle of 2 locks"),
			"closeAll holds the table for writing, handle for reading")
	})
}

// forEachKind runs test for every kind, in a subtest named after it, from
// a fresh graph; n prefixes the names of the subtest's own classes.
func forEachKind(t *testing.T, test func(t *testing.T, k kind.Kind, n string)) {
	for _, k := range kind.All() {
		t.Run(k.String(), func(t *testing.T) {
			fresh(t)
			test(t, k, t.Name())
		})
	}
}

// under returns a function that takes x then y while holding g.
func under(g, x, y sync.Locker) func() {
	return func() {
		g.Lock()
		lockAB(x, y)
		g.Unlock()
	}
}

// hasCycle reports whether a cycle report names want.
func hasCycle(want string) bool {
	for _, v := range only(lockorder.KindCycle) {
		if strings.Contains(v.Message, want) {
			return true
		}
	}
	return false
}
