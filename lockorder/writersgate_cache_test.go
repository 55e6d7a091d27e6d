//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The writers' gate and the chain cache: a chain the cache stands for
// must be one whose gates still hold, or an acquisition along it keeps a
// lock in a gate that the acquisition did not hold.

// After check mode is left and entered again, the writers' gate of Y is
// learnt afresh; a write of Y along a chain cached before (under K, not
// G) must narrow it as the first sighting of that chain did. Here the
// rule of one edge holding G (the ∃ rule) would hold X -> Y(read) -> X
// back, X->Y(read) being taken under G. The deadlock: A: Y.RLock;
// X.Lock. B: G.Lock; X.Lock; Y.RLock, queued behind W. W: K.Lock;
// Y.Lock, queued behind A's read.
func TestWritersGateRelearntAlongAChainCachedBeforeCheckStopped(t *testing.T) {
	fresh(t)
	g, k, x := lockorder.NewMutex("wgc1-G"), lockorder.NewMutex("wgc1-K"), lockorder.NewMutex("wgc1-X")
	y := lockorder.NewRWMutex("wgc1-Y")
	run(func() { k.Lock(); y.Lock(); y.Unlock(); k.Unlock() }) // the chain (K, Y) is cached
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	run(func() { g.Lock(); y.Lock(); y.Unlock(); g.Unlock() }) // the first write again: the gate is {G}
	run(func() { k.Lock(); y.Lock(); y.Unlock(); k.Unlock() }) // a write without G: the gate opens
	run(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() })
	run(func() {
		g.Lock()
		x.Lock()
		y.RLock()
		y.RUnlock()
		x.Unlock()
		g.Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 1, "X -> Y(read) -> X can deadlock (a writer of Y under K)")
}

// The same under the rule of every edge (gatedCycle: every edge but the
// read edge holds G, and the read edge is counted with Y's writers'
// gate), the write without G coming last: along the chain cached before
// the mode switch, it must open the gate.
func TestWritersGateRelearntAlongAChainCachedBeforeCheckStoppedEveryEdge(t *testing.T) {
	fresh(t)
	g, k, x := lockorder.NewMutex("wgc2-G"), lockorder.NewMutex("wgc2-K"), lockorder.NewMutex("wgc2-X")
	y := lockorder.NewRWMutex("wgc2-Y")
	writeUnderK := func() { run(func() { k.Lock(); y.Lock(); y.Unlock(); k.Unlock() }) }
	writeUnderK()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	gatedCycle(g, x, y)
	assert.Empty(t, only(lockorder.KindCycle), "every write seen since check mode came back held G")
	writeUnderK()
	assert.Len(t, only(lockorder.KindCycle), 1, "Y(read) -> X -> Y(read) can deadlock (a writer of Y under K)")
}

// handedOffGate takes X->Y(read) under G, then again along the same
// cached chain after another goroutine has released G (legal for a
// Mutex, and for an RWMutex's write hold): the second time G is not
// held, and a writer of Y under G may be queued on Y. Then Y(read)->X.
// One edge holding G is enough to hold the cycle back (the ∃ rule), so
// X->Y(read) must not keep G in its gate.
func handedOffGate(t *testing.T, lockG, unlockG func(), x *lockorder.Mutex, y *lockorder.RWMutex) {
	t.Helper()
	run(func() { lockG(); y.Lock(); y.Unlock(); unlockG() }) // Y's writers' gate is {G}
	take := func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() }
	run(func() { lockG(); take(); unlockG() }) // X->Y(read) under G, recorded
	run(func() {
		lockG()
		take()       // along the cached chain, G held
		run(unlockG) // handed off: G is free
		take()       // along the cached chain, G not held
	})
	run(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() })
	assert.Len(t, only(lockorder.KindCycle), 1, "X -> Y(read) -> X can deadlock (G not held at X->Y)")
}

func TestWritersGateNotHeldByAHandedOffMutex(t *testing.T) {
	fresh(t)
	g, x := lockorder.NewMutex("wgc3-G"), lockorder.NewMutex("wgc3-X")
	handedOffGate(t, g.Lock, g.Unlock, x, lockorder.NewRWMutex("wgc3-Y"))
}

func TestWritersGateNotHeldByAHandedOffRWMutex(t *testing.T) {
	fresh(t)
	g, x := lockorder.NewRWMutex("wgc4-G"), lockorder.NewMutex("wgc4-X")
	handedOffGate(t, g.Lock, g.Unlock, x, lockorder.NewRWMutex("wgc4-Y"))
}
