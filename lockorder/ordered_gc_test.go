//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/lockorder"
)

// A worker (Add, go, deferred Done) takes a then b, then works for a
// while without locks; a collection in that time drops its idle state
// (internal/gls, after a GC). Its Done still publishes its clock, kept in
// the state's remnant (gls.Dropped), so the waiter's b then a, ordered
// after the worker's a->b by the Wait, is not reported.
func TestAGCBeforeDoneKeepsTheRelease(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("rv21-gcd-a"), lockorder.NewMutex("rv21-gcd-b")
	// More states than gls keeps through a trim (trimFloor, 64): a
	// program with a few hundred goroutines.
	release := make(chan struct{})
	defer close(release)
	for range 200 {
		ready := make(chan struct{})
		go func() {
			m := lockorder.NewMutex("rv21-gcd-m")
			m.Lock()
			m.Unlock()
			close(ready)
			<-release
		}()
		<-ready
	}
	var wg lockorder.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		lockAB(a, b)
		for range 5 { // work that allocates: collections run, and trims
			collectAndTrim()
		}
	}()
	wg.Wait()
	lockAB(b, a)
	assert.Empty(t, only(lockorder.KindCycle), "the worker's a->b happened before the Wait returned")
}

// collectAndTrim collects, and returns once a trim has run after the
// collection (gls.Trim, which a cleanup runs after each one).
func collectAndTrim() {
	_, _, _, trims := gls.Stats()
	pollBusy(func() bool {
		runtime.GC()
		_, _, _, n := gls.Stats()
		return n > trims
	})
}

// The same, made certain: the worker's state is in the overflow (its
// window of the table is full of busy states) when a trim drops it. Its
// remnant, with its clock, stays there for it (R17, R21): the Done still
// publishes what the worker did.
func TestATrimOfAnOverflowStateBeforeDoneKeepsTheRelease(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("rv21-ovf-a"), lockorder.NewMutex("rv21-ovf-b")
	var wg lockorder.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Busy states of ids that share the worker's window (the table
		// has 8,192 slots, a window 8), made before the worker's own.
		id := goid.ID()
		var crowd []int64
		for k := range int64(9) {
			crowd = append(crowd, id+(k+1)<<13)
			gls.Get(crowd[k])
		}
		defer func() {
			for _, f := range crowd {
				gls.Get(f).Rest()
				gls.Release(f)
			}
		}()
		lockAB(a, b)
		gls.Trim() // the overflow's idle states are dropped at every trim
		if gls.Find(id) != nil {
			t.Error("the worker's idle state was not dropped")
		}
	}()
	wg.Wait()
	lockAB(b, a)
	assert.Empty(t, only(lockorder.KindCycle), "the worker's a->b happened before the Wait returned")
}
