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

// The common gate (R6): a 2-cycle whose edges are both taken under s.
func TestOnlyAnExclusiveKindIsACommonGate(t *testing.T) {
	for _, k := range kind.All() {
		t.Run(k.String(), func(t *testing.T) {
			fresh(t)
			s := lockorder.NewMutexOfKind("kg-s-"+k.String(), k)
			a, b := lockorder.NewMutex("kg-a-"+k.String()), lockorder.NewMutex("kg-b-"+k.String())
			gated := func(x, y sync.Locker) {
				s.Lock()
				lockAB(x, y)
				s.Unlock()
			}
			run(func() { gated(a, b) })
			run(func() { gated(b, a) })
			assert.Equal(t, !k.Exclusive(), len(only(lockorder.KindCycle)) == 1,
				"exclusive %v: both edges under s", k.Exclusive())
		})
	}
}

// The pair rule (R9): in the 3-cycle a -> b -> c -> a two edges are
// taken under g, the third without: no common gate, but a pair.
func TestOnlyAnExclusiveKindHoldsBackAPair(t *testing.T) {
	for _, k := range kind.All() {
		t.Run(k.String(), func(t *testing.T) {
			fresh(t)
			n := "kp-" + k.String()
			g := lockorder.NewMutexOfKind(n+"-g", k)
			a, b, c := lockorder.NewMutex(n+"-a"), lockorder.NewMutex(n+"-b"), lockorder.NewMutex(n+"-c")
			gated := func(x, y sync.Locker) {
				g.Lock()
				lockAB(x, y)
				g.Unlock()
			}
			run(func() { gated(a, b) })
			run(func() { gated(b, c) })
			run(func() { lockAB(c, a) })
			assert.Equal(t, !k.Exclusive(), hasCycle("cycle of 3 locks"),
				"exclusive %v: two edges hold g", k.Exclusive())
		})
	}
}

// The writers' gate (R7): every write of y is made under g, and so is
// every edge of the read cycle x -> y(read) -> x but the reader's.
func TestOnlyAnExclusiveKindIsAWritersGate(t *testing.T) {
	for _, k := range kind.All() {
		t.Run(k.String(), func(t *testing.T) {
			fresh(t)
			n := "kw-" + k.String()
			g, x, y := lockorder.NewMutexOfKind(n+"-g", k), lockorder.NewMutex(n+"-x"), lockorder.NewRWMutex(n+"-y")
			gatedCycle(g, x, y)
			assert.Equal(t, !k.Exclusive(), hasCycle(n+"-x -> "+n+"-y"),
				"exclusive %v: every writer of y holds g", k.Exclusive())
		})
	}
}

// The ∃ rule (R8): every write of mmap is made under rw, and one edge of
// the cycle meta -> mmap(read) -> rw -> meta holds rw (as its From).
func TestOnlyAnExclusiveKindHoldsBackByOneEdge(t *testing.T) {
	for _, k := range kind.All() {
		t.Run(k.String(), func(t *testing.T) {
			fresh(t)
			n := "ke-" + k.String()
			rw, meta, mmap := lockorder.NewMutexOfKind(n+"-rw", k), lockorder.NewMutex(n+"-meta"), lockorder.NewRWMutex(n+"-mmap")
			bboltCycle(t, rw, meta, mmap, nil)
			assert.Equal(t, !k.Exclusive(), hasCycle("cycle of 3 locks: "+n+"-meta -> "+n+"-mmap -> "+n+"-rw"),
				"exclusive %v: a writer of mmap holds rw", k.Exclusive())
		})
	}
}

// R-RW (R18): the table held for writing around one edge and for reading
// around the other, for the kinds that can be held for reading.
func TestOnlyAnExclusiveKindExcludesReadFromWrite(t *testing.T) {
	for _, k := range kind.All() {
		if !k.Readable() {
			continue
		}
		t.Run(k.String(), func(t *testing.T) {
			fresh(t)
			n := "kr-" + k.String()
			r := &registry{
				table:   lockorder.NewRWMutexOfKind(n+"-table", k),
				session: lockorder.NewMutex(n + "-session"),
				stat:    lockorder.NewMutex(n + "-stats"),
			}
			run(r.closeAll)
			run(r.handle)
			run(r.handle)
			assert.Equal(t, !k.Exclusive(), len(only(lockorder.KindCycle)) == 1,
				"exclusive %v: closeAll holds the table for writing, handle for reading", k.Exclusive())
		})
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
