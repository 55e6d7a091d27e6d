//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// G holds y and h and takes 20 locks x0..x19 under them (edges y->xi
// and h->xi wait on G, R23). h is then handed off (another goroutine
// unlocks it): its edges are no order G keeps. G then nests 90 locks
// under y, past held.MaxProving: one acquisition pushes out all 20 of the
// x acquisitions at once; their h->xi edges are dropped, their y->xi
// edges added. Those acquisitions lost an edge, so they are not cached
// (more of them than the ring of chains remembered as dropped holds): G
// taking y, h, x0 again, its own holds, records h->x0, and another
// goroutine's x0 -> h closes the cycle h -> x0 -> h.
func TestAPushedOutChainWithAHandedOffEdgeIsNotCached(t *testing.T) {
	fresh(t)
	y, h := lockorder.NewMutex("rv-y"), lockorder.NewMutex("rv-h")
	xs := make([]*lockorder.Mutex, 20)
	for i := range xs {
		xs[i] = lockorder.NewMutex(fmt.Sprintf("rv-x%d", i))
	}
	ds := make([]*lockorder.Mutex, 90)
	for i := range ds {
		ds[i] = new(lockorder.Mutex)
	}
	handed, released := make(chan struct{}), make(chan struct{})
	go func() {
		<-handed
		h.Unlock() // G's hold of h, handed off
		close(released)
	}()
	run(func() { // G
		y.Lock()
		h.Lock()
		for _, x := range xs {
			x.Lock()
			x.Unlock()
		}
		close(handed)
		<-released
		nestAll(ds) // under y: 4095 edges, the last acquisition pushes out the x ones
		y.Unlock()

		// Again, every hold G's own.
		y.Lock()
		h.Lock()
		xs[0].Lock()
		xs[0].Unlock()
		h.Unlock()
		y.Unlock()
	})
	assert.Empty(t, lockorder.Violations())
	run(func() {
		xs[0].Lock()
		h.Lock()
		h.Unlock()
		xs[0].Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 1, "the cycle rv-h -> rv-x0 -> rv-h")
}

// G write-holds w and read-holds r and takes x: r->x waits on G (R12),
// w->x too (R23), under one chain key. G then nests 91 locks under them:
// their read edges push r->x out of the Waits (held.MaxWaiting), dropped
// unrecorded, and the last acquisition pushes x's write acquisition out
// of proving (held.MaxProving), its edges added at once. The chain is not
// cached, since its read edge was dropped: G taking w, r, x again records
// r->x, and another goroutine's x -> r (a write of r) closes the cycle
// r -> x -> r.
func TestAPushedOutChainWithADroppedReadEdgeIsNotCached(t *testing.T) {
	fresh(t)
	r, w, x := lockorder.NewRWMutex("rv2-r"), lockorder.NewMutex("rv2-w"), lockorder.NewMutex("rv2-x")
	ds := make([]*lockorder.Mutex, 91)
	for i := range ds {
		ds[i] = new(lockorder.Mutex)
	}
	run(func() {
		w.Lock()
		r.RLock()
		x.Lock()
		x.Unlock()
		nestAll(ds)
		r.RUnlock()
		w.Unlock()

		w.Lock()
		r.RLock()
		x.Lock()
		x.Unlock()
		r.RUnlock()
		w.Unlock()
	})
	assert.Empty(t, lockorder.Violations())
	run(func() {
		x.Lock()
		r.Lock()
		r.Unlock()
		x.Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 1, "the cycle rv2-r -> rv2-x -> rv2-r")
}

// A read edge dropped from the Waits (held.MaxWaiting) before the write
// hold of its acquisition is released: the write edge's proof does not
// cache the chain either, and the read edge, seen again, closes its
// cycle.
func TestAProvedChainWithADroppedReadEdgeIsNotCached(t *testing.T) {
	fresh(t)
	r, w, x := lockorder.NewRWMutex("pc-r"), lockorder.NewMutex("pc-w"), lockorder.NewMutex("pc-x")
	ds := make([]*lockorder.Mutex, 70)
	for i := range ds {
		ds[i] = new(lockorder.Mutex)
	}
	run(func() {
		w.Lock()
		r.RLock()
		x.Lock()
		x.Unlock()
		nestAll(ds) // read edges from r past held.MaxWaiting: r->x is dropped
		w.Unlock()  // proves w->x
		r.RUnlock()

		w.Lock()
		r.RLock()
		x.Lock()
		x.Unlock()
		r.RUnlock()
		w.Unlock()
	})
	assert.Empty(t, lockorder.Violations())
	run(func() {
		x.Lock()
		r.Lock()
		r.Unlock()
		x.Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 1, "the cycle pc-r -> pc-x -> pc-r")
}
