//go:build !syncwatch_off

package lockorder_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A Wait at zero under L in one goroutine, then, in another goroutine
// syncwatch does not order after it, the group's first Go, whose function
// takes L. Swap the two and the waiter holds L waiting for f while f waits
// for L: a real deadlock. The Wait's edge, kept on the group, is added at
// that Go (R22), and the cycle reported.
func TestAWaitAtZeroBeforeTheFirstGoIsStillOrdered(t *testing.T) {
	fresh(t)
	mu := lockorder.NewMutex("r22-zero")
	var wg lockorder.WaitGroup
	run(func() {
		mu.Lock()
		wg.Wait() // at zero: a little later it would have waited for f
		mu.Unlock()
	})
	wg.Go(func() {
		mu.Lock()
		mu.Unlock()
	})
	wg.Wait()
	require.Len(t, only(lockorder.KindCycle), 1, "L -> group -> L")
}

// The same with a Wait that really waits (for a task started by Add and
// go) under L, before the first Go elsewhere.
func TestAWaitBeforeTheFirstGoIsStillOrdered(t *testing.T) {
	fresh(t)
	mu := lockorder.NewMutex("r22-block")
	var wg lockorder.WaitGroup
	wg.Add(1)
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		mu.Lock()
		wg.Wait()
		mu.Unlock()
	}()
	require.Eventually(t, func() bool { return lockorder.WaitCountsGroup(&wg) }, 10*time.Second, time.Millisecond)
	wg.Done()
	<-waited
	wg.Go(func() {
		mu.Lock()
		mu.Unlock()
	})
	wg.Wait()
	require.Len(t, only(lockorder.KindCycle), 1, "L -> group -> L")
}

// A Wait under x that began before the group's first Go, whose function
// needs x: a real deadlock. The Wait's kept edge, added at the Go, closes
// the cycle as the function takes x, before it blocks: it is reported at
// once, and the test then breaks the deadlock (x unlocked by another
// goroutine, which sync allows).
func TestADeadlockThroughAWaitBeforeTheFirstGoIsPredicted(t *testing.T) {
	reportDeadlocks(t)
	x := lockorder.NewMutex("r22-dl")
	var wg lockorder.WaitGroup
	wg.Add(1)
	release := make(chan struct{})
	go func() {
		<-release
		wg.Done()
	}()
	locked := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		x.Lock()
		close(locked)
		wg.Wait() // x is unlocked by the test, to break the deadlock
	}()
	<-locked
	defer func() {
		x.Unlock() // break it, whatever the test found
		<-ended
	}()
	require.Eventually(t, func() bool { return lockorder.WaitCountsGroup(&wg) }, 10*time.Second, time.Millisecond)
	wg.Go(func() {
		x.Lock()
		x.Unlock()
	})
	close(release)
	v := awaitKind(t, lockorder.KindCycle, 10*time.Second)
	assert.Contains(t, v.Message, "r22-dl")
}

// A Wait that began before the group's first Go, in ModeCheck, keeps its
// edges as it begins: they are added at the Go, in ModeCheck, and nothing
// more is reported after a switch to ModeOff.
func TestAWaitEndingAfterModeOffAddsNoEdge(t *testing.T) {
	fresh(t)
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	x, y := lockorder.NewMutex("r22-off-x"), lockorder.NewMutex("r22-off-y")
	run(func() { lockAB(y, x) }) // y -> x
	var wg lockorder.WaitGroup
	wg.Add(1)
	release := make(chan struct{})
	go func() {
		<-release
		wg.Done()
	}()
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		x.Lock()
		wg.Wait() // x -> group, when it ends
		x.Unlock()
	}()
	require.Eventually(t, func() bool { return lockorder.WaitCountsGroup(&wg) }, 10*time.Second, time.Millisecond)
	gone := make(chan struct{})
	wg.Go(func() { // group -> y
		y.Lock()
		y.Unlock()
		close(gone)
	})
	<-gone
	before := len(only(lockorder.KindCycle))
	lockorder.Configure(lockorder.WithMode(lockorder.ModeOff))
	close(release)
	<-waited
	after := len(only(lockorder.KindCycle))
	assert.Equal(t, before, after, "no report made in ModeOff")
}
