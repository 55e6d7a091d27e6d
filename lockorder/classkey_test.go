//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A program that makes a new lock of one class under the same read holds
// each time (a cache's node, locked under the cache's read lock) records
// the edges into the class once: the chain cache knows them by the class,
// not one chain per lock (RULES.md R2), once the hold is released and the
// edges proved (R12).
func TestNewLocksOfANamedClassUnderOneHoldAreOneChain(t *testing.T) {
	const locks = 200
	fresh(t)
	cache := lockorder.NewRWMutex("classkey.cache")
	before := lockorder.Chains()
	run(func() {
		for range locks {
			cache.RLock()
			n := lockorder.NewMutex("classkey.node")
			n.Lock()
			n.Unlock()
			cache.RUnlock()
		}
	})
	assert.Less(t, lockorder.Chains()-before, 8, "one chain per lock of the class")
	assert.Empty(t, lockorder.Violations())
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
// collected before the proof and a later lock of the class is taken under
// the same hold: the edges into it are known by the lock, so the later
// one records its own, and the inverse order is a cycle. (The inverse
// order is taken on another lock of a's class: on a itself, a would
// meet the cycle's two edges, and R26 would hold back the cycle, which
// no one lock shows.)
func TestAnEdgeIntoACollectedLockOfANamedClassIsNotLost(t *testing.T) {
	fresh(t)
	a, a2 := lockorder.NewMutex("classkey.a"), lockorder.NewMutex("classkey.a")
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
		a2.Lock()
		a2.Unlock()
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

// A goroutine whose wait is proved part of a deadlock has the edges into
// the lock it waits for, which wait on it (R23), added before the
// deadlock is reported (held.proving.Into). So too when an earlier lock
// of the class was taken under the same hold: the second lock's edges
// are its own, and the cycle A -> N -> A is reported.
func TestADeadlockProvesTheEdgeIntoASecondLockOfTheClass(t *testing.T) {
	reportDeadlocks(t)
	a := lockorder.NewMutex("classkey.dl.a")
	n1, n2 := lockorder.NewMutex("classkey.dl.n"), lockorder.NewMutex("classkey.dl.n")
	ready, holdsN2 := make(chan struct{}), make(chan struct{})
	var rescued atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		a.Lock()
		n1.Lock() // the edge a -> N waits for a's own Unlock (R23)
		n1.Unlock()
		close(ready)
		<-holdsN2
		n2.Lock() // blocks: the other goroutine holds n2 and waits for a
		n2.Unlock()
		if !rescued.Load() {
			a.Unlock()
		}
	})
	wg.Go(func() {
		<-ready
		n2.Lock()
		close(holdsN2)
		a.Lock() // blocks: the first goroutine holds a
		a.Unlock()
		n2.Unlock()
	})
	awaitKind(t, lockorder.KindDeadlock, time.Minute)
	cycles := len(only(lockorder.KindCycle))
	rescued.Store(true)
	a.Unlock() // breaks it: sync lets any goroutine unlock
	wg.Wait()
	require.Equal(t, 1, cycles, "the cycle a -> N -> a, proved by the deadlock")
}

// Past held.MaxProving, an acquisition pushed out whose lock the goroutine
// still holds (a nesting) has its edges added as proved, and one whose
// lock was released since (a section) has them dropped (R23). A second
// lock of the class, taken and still held under the hold the first was
// taken and released under, is a nesting of its own: W -> N is added,
// and the inverse order is a cycle.
func TestAPushedOutNestingOfASecondLockOfTheClassKeepsItsEdge(t *testing.T) {
	fresh(t)
	w := lockorder.NewMutex("classkey.po.w")
	n1, n2 := lockorder.NewMutex("classkey.po.n"), lockorder.NewMutex("classkey.po.n")
	run(func() {
		w.Lock()
		n1.Lock() // W -> N waits for w's own Unlock
		n1.Unlock()
		n2.Lock()
		// Eight more holds, each a class of its own, so that every new
		// lock below adds ten edges waiting and no hold's class reaches
		// its own bound before held.MaxProving is passed.
		var holds [8]lockorder.Mutex
		for i := range holds {
			holds[i].Lock()
		}
		xs := make([]lockorder.Mutex, 500)
		for i := range xs {
			xs[i].Lock()
			xs[i].Unlock()
		}
		for i := len(holds) - 1; i >= 0; i-- {
			holds[i].Unlock()
		}
		n2.Unlock()
		w.Unlock()
	})
	run(func() { lockAB(n1, w) })
	require.Len(t, only(lockorder.KindCycle), 1, "W -> N -> W")
}

// A read hold handed off (another goroutine read-unlocks it) spoils the
// edges from it that wait (R12, R13): a second lock of the class, taken
// once the hold is taken again, is recorded anew, not counted as the
// first lock's spoiled chain, and the inverse order is a cycle.
func TestASecondLockOfTheClassAfterAReadHandOffIsRecorded(t *testing.T) {
	fresh(t)
	r := lockorder.NewRWMutex("classkey.ho.r")
	n1, n2 := lockorder.NewMutex("classkey.ho.n"), lockorder.NewMutex("classkey.ho.n")
	run(func() {
		r.RLock()
		n1.Lock()
		n1.Unlock()
		run(r.RUnlock) // handed off
		r.RLock()
		n2.Lock()
		n2.Unlock()
		r.RUnlock()
	})
	run(func() { lockAB(n2, r) })
	require.Len(t, only(lockorder.KindCycle), 1)
}
