//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A program that makes a new lock of one class under the same holds each
// time (a cache's node, locked under the cache's lock) records the edges
// into the class once: the chain cache knows them by the class, not one
// chain per lock (RULES.md R2). Under a read hold (R12) and a write hold
// (R23) alike, once the hold is released and the edges proved.
func TestNewLocksOfANamedClassUnderOneHoldAreOneChain(t *testing.T) {
	const locks = 200
	for _, tc := range []struct {
		name         string
		lock, unlock func(*lockorder.RWMutex)
	}{
		{"read hold", (*lockorder.RWMutex).RLock, (*lockorder.RWMutex).RUnlock},
		{"write hold", (*lockorder.RWMutex).Lock, (*lockorder.RWMutex).Unlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh(t)
			cache := lockorder.NewRWMutex("classkey.cache")
			before := lockorder.Chains()
			run(func() {
				for range locks {
					tc.lock(cache)
					n := lockorder.NewMutex("classkey.node")
					n.Lock()
					n.Unlock()
					tc.unlock(cache)
				}
			})
			assert.Less(t, lockorder.Chains()-before, 8, "one chain per lock of the class")
			assert.Empty(t, lockorder.Violations())
		})
	}
}

// The locks of a class are still told apart where the goroutine holds one
// of the class already: two of them taken in both orders are a cycle.
func TestLocksOfANamedClassUnderOneOfItsOwnAreTheirOwnChains(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("classkey.shard"), lockorder.NewMutex("classkey.shard")
	run(func() { lockAB(a, b) })
	run(func() { lockAB(b, a) })
	require.Len(t, only(lockorder.KindCycle), 1)
}

// An edge into a lock of a named class that waits for its proof (R23: a
// write hold may be handed off) reaches the graph even if that lock is
// collected before the proof: a later lock of the class under the same
// hold counts the chain as recorded, so the edge is the class's only one,
// and the inverse order is a cycle.
func TestAnEdgeIntoACollectedLockOfANamedClassIsNotLost(t *testing.T) {
	fresh(t)
	a := lockorder.NewMutex("classkey.a")
	run(func() {
		a.Lock()
		lockOnce("classkey.n") // its lock is garbage once this returns
		for range 3 {
			runtime.GC()
		}
		lockOnce("classkey.n") // the same chain, under the same hold
		a.Unlock()             // proves the edge a -> classkey.n
	})
	run(func() {
		n := lockorder.NewMutex("classkey.n")
		n.Lock()
		a.Lock()
		a.Unlock()
		n.Unlock()
	})
	require.Len(t, only(lockorder.KindCycle), 1)
}

// lockOnce locks and unlocks a new Mutex of the class called name.
//
//go:noinline
func lockOnce(name string) {
	n := lockorder.NewMutex(name)
	n.Lock()
	n.Unlock()
}
