//go:build !syncwatch_off

package lockorder_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// longWaits configures a short long-wait bound for one test.
func longWaits(t *testing.T) {
	t.Helper()
	reportDeadlocks(t)
	lockorder.Configure(lockorder.WithLongWait(50 * time.Millisecond))
}

// longWaitsOn returns the long-wait reports of the lock of class name:
// the monitor may still publish a report of an earlier test's, made
// before this test's Reset, on a loaded machine.
func longWaitsOn(name string) []lockorder.Violation {
	return slices.DeleteFunc(only(lockorder.KindLongWait), func(v lockorder.Violation) bool {
		return !strings.Contains(v.Message, " "+name+"#")
	})
}

// A long-wait is a guess (W6): once every wait it was reported for has
// ended, the record says so and is expected (slow, not stuck), so that
// lockordertest shows it without failing. While one of them still waits,
// it stays a failure.
func TestALongWaitThatEndedIsSlowNotStuck(t *testing.T) {
	longWaits(t)
	mu := lockorder.NewMutex("slow-holder")
	mu.Lock()
	done := make(chan struct{})
	for range 2 {
		go func() {
			mu.Lock() // both wait here, under one report
			mu.Unlock()
			done <- struct{}{}
		}()
	}
	v := awaitKind(t, lockorder.KindLongWait, 10*time.Second)
	assert.False(t, v.Expected, "a wait still under way is a failure")
	mu.Unlock()
	<-done // one waiter is through; the other may still wait, but need not
	<-done
	vs := longWaitsOn("slow-holder")
	require.NotEmpty(t, vs)
	for _, v := range vs {
		assert.True(t, v.Expected, "a long-wait whose waits all ended: %s", v)
		assert.Contains(t, v.Detail, "The wait has since ended, after ")
		assert.GreaterOrEqual(t, v.Waited, 50*time.Millisecond)
	}
}

// Two waits reported under one record: the record stays a failure until
// the second has ended too.
func TestALongWaitStaysWhileOneOfItsWaitsGoesOn(t *testing.T) {
	longWaits(t)
	mu := lockorder.NewMutex("slow-holder-2")
	mu.Lock()
	through := make(chan struct{})
	release := make(chan struct{})
	for range 2 {
		go func() {
			mu.Lock()
			through <- struct{}{}
			<-release
			mu.Unlock()
		}()
	}
	// Both waits are reported (under one record: one lock, one holder,
	// one line) before the holder lets one through.
	require.Eventually(t, func() bool { return lockorder.SlowWaitsFollowed() == 2 }, 10*time.Second, 5*time.Millisecond)
	vs := longWaitsOn("slow-holder-2")
	require.Len(t, vs, 1, "two waits, one record")
	mu.Unlock()
	<-through // one is through and holds mu; the other waits on
	vs = longWaitsOn("slow-holder-2")
	require.Len(t, vs, 1)
	assert.False(t, vs[0].Expected, "shown as ended while one of its waits goes on: %s", vs[0])
	release <- struct{}{}
	<-through
	release <- struct{}{}
	vs = longWaitsOn("slow-holder-2")
	require.Len(t, vs, 1)
	assert.True(t, vs[0].Expected, "both waits ended: %s", vs[0])
}

// Many waiters at one line on one slow holder: every wait is followed,
// and the record is shown as ended once all have ended.
func TestManyLongWaitsUnderOneRecord(t *testing.T) {
	longWaits(t)
	mu := lockorder.NewMutex("slow-holder-many")
	mu.Lock()
	const n = 40
	done := make(chan struct{}, n)
	for range n {
		go func() {
			mu.Lock() // one line, one lock, one holder: one record
			mu.Unlock()
			done <- struct{}{}
		}()
	}
	require.Eventually(t, func() bool { return lockorder.SlowWaitsFollowed() == n }, 30*time.Second, 5*time.Millisecond)
	vs := only(lockorder.KindLongWait)
	require.Len(t, vs, 1, "one record")
	assert.False(t, vs[0].Expected)
	mu.Unlock()
	for range n {
		<-done
	}
	vs = only(lockorder.KindLongWait)
	require.Len(t, vs, 1)
	assert.True(t, vs[0].Expected, "all %d waits ended: %s", n, vs[0])
}

// A request type with a WaitGroup of its own, many requests waited on at
// one line (a write queue behind a busy writer): one record for the line,
// whatever group each waits on, its occurrences counted.
func TestLongWaitsOnFreshGroupsAtOneLineAreOneRecord(t *testing.T) {
	longWaits(t)
	type request struct{ wg lockorder.WaitGroup }
	const n = 20
	reqs := make([]*request, n)
	release := make(chan struct{})
	done := make(chan struct{}, n)
	for i := range reqs {
		r := &request{}
		r.wg.Add(1)
		go func() { <-release; r.wg.Done() }() // the writer, busy
		reqs[i] = r
		go func() {
			r.wg.Wait() // one line
			done <- struct{}{}
		}()
	}
	require.Eventually(t, func() bool { return lockorder.SlowWaitsFollowed() == n }, 30*time.Second, 5*time.Millisecond)
	vs := only(lockorder.KindLongWait)
	require.Len(t, vs, 1, "one record for the line, not one per group")
	assert.Equal(t, n, vs[0].Instances)
	close(release)
	for range n {
		<-done
	}
}
