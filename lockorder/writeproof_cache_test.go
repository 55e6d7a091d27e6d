//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Second review of R23 (commit 92691e9). The tests fail on 0c827e4.

// A missed cycle: b -> c and a -> c wait on one acquisition (chain b, a,
// c). a is handed off; its taker takes a again, takes d under it (so the
// new hold is marked) and releases a itself: Released drops a -> c (old
// hold) but leaves b -> c waiting under the same key. Taking a then c again with that chain, ProvingKey finds the
// key's remaining edge standing and the acquisition is not recorded: a ->
// c under a hold the goroutine keeps and ends itself never reaches the
// graph, and c -> a elsewhere is not reported.
func TestAPartlyDroppedAcquisitionSkipsItsNewSighting(t *testing.T) {
	fresh(t)
	b, a, c, d := lockorder.NewMutex("rv2-B"), lockorder.NewMutex("rv2-A"), lockorder.NewMutex("rv2-C"), lockorder.NewMutex("rv2-D")
	run(func() {
		b.Lock()
		a.Lock()
		c.Lock() // b -> c, a -> c wait
		c.Unlock()
		run(a.Unlock) // a's hold handed to another goroutine
		a.Lock()
		d.Lock() // a -> d: a's new hold now has edges waiting on it
		d.Unlock()
		a.Unlock() // its own: a -> d proved; a -> c, seen under the old hold, dropped
		a.Lock()
		c.Lock() // a -> c under a hold of its own: must be recorded
		c.Unlock()
		a.Unlock() // proves it
		b.Unlock()
	})
	run(func() { lockAB(c, a) })
	assert.Len(t, only(lockorder.KindCycle), 1, "a -> c under its taker's own hold, c -> a closes it")
}

// A missed cycle: the ring of dropped chains forgets. As above, a -> c of
// chain (b, a, c) is dropped, its hold handed off, while b -> c waits.
// Nine more chains drop an edge the same way (or nine acquisitions taken
// out past MaxProving: each is remembered too) before b's release proves
// b -> c: provedWrites no longer finds the chain dropped and caches it.
// The chain, taken again under holds of the goroutine's own, is never
// recorded: a -> c never reaches the graph.
func TestAForgottenDropCachesTheChain(t *testing.T) {
	fresh(t)
	b, a, c := lockorder.NewMutex("rv2f-B"), lockorder.NewMutex("rv2f-A"), lockorder.NewMutex("rv2f-C")
	y := lockorder.NewMutex("rv2f-Y")
	dropOne := func(h, to *lockorder.Mutex) {
		h.Lock()
		to.Lock() // h -> to waits
		to.Unlock()
		run(h.Unlock) // handed off
		h.Lock()
		d := new(lockorder.Mutex)
		d.Lock() // h -> d: the new hold has edges waiting on it
		d.Unlock()
		h.Unlock() // its own: h -> d proved, h -> to dropped
	}
	run(func() {
		b.Lock()
		dropOne(a, c) // chain (b, a, c): a -> c dropped, b -> c waits
		for range 9 {
			dropOne(new(lockorder.Mutex), y) // nine more chains dropped
		}
		b.Unlock() // proves b -> c: chain (b, a, c) cached
		b.Lock()
		a.Lock()
		c.Lock() // a -> c under holds of its own: must be recorded
		c.Unlock()
		a.Unlock()
		b.Unlock()
	})
	run(func() { lockAB(c, a) })
	assert.Len(t, only(lockorder.KindCycle), 1, "a -> c under its taker's own hold, c -> a closes it")
}
