//go:build !syncwatch_off

package lockorder_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// R22: a Wait on a group no Go'd function has held adds no order edge (no
// edge can start at the group, so none through it closes a cycle): a
// fresh group per request, waited under a lock, costs no graph node.
func TestAWaitOnAGroupNeverGoneAddsNoEdge(t *testing.T) {
	fresh(t)
	mu := lockorder.NewMutex("r22-under")
	for range 100 {
		var wg lockorder.WaitGroup
		wg.Add(1)
		go wg.Done()
		mu.Lock()
		wg.Wait()
		mu.Unlock()
	}
	_, edges := lockorder.GraphSize()
	assert.Zero(t, edges, "a group never Go'd is no node of an order cycle")
}

// R22 keeps the cycle through a group that Go'd functions hold: a Wait
// under L while a Go'd function takes L, in either order.
func TestAWaitOnAGroupGoneIsStillOrdered(t *testing.T) {
	fresh(t)
	mu := lockorder.NewMutex("r22-l")
	var wg lockorder.WaitGroup
	wg.Go(func() {
		mu.Lock()
		mu.Unlock()
	})
	wg.Wait()
	run(func() {
		mu.Lock()
		wg.Wait() // at zero: the same call a little earlier would have waited
		mu.Unlock()
	})
	require.Len(t, only(lockorder.KindCycle), 1)
}

// A task Go'd while a Wait that began on an unheld group is under way
// can be waited for: the Wait's edges are added when it ends, and the
// cycle they close is reported.
func TestAGroupGoneDuringAWaitOrdersThatWait(t *testing.T) {
	fresh(t)
	x, y := lockorder.NewMutex("r22-x"), lockorder.NewMutex("r22-y")
	var wg lockorder.WaitGroup
	wg.Add(1) // a task started without Go
	release := make(chan struct{})
	go func() {
		<-release
		wg.Done()
	}()
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		x.Lock()
		wg.Wait() // x, then the group (added when the Wait ends)
		x.Unlock()
	}()
	require.Eventually(t, func() bool { return lockorder.WaitCountsGroup(&wg) }, 10*time.Second, time.Millisecond)
	wg.Go(func() { // legal: the counter is not zero
		y.Lock() // the group, then y
		y.Unlock()
	})
	close(release)
	<-waited
	run(func() { lockAB(y, x) }) // y, then x: x -> group -> y -> x
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "the cycle through the Wait that began before the group was held")
	assert.Contains(t, vs[0].Message, "r22-x")
}
