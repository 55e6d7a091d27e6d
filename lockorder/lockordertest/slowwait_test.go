package lockordertest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/lockordertest"
)

// longWaitRecord reports whether a long-wait record with the given
// Expected is recorded.
func longWaitRecord(expected bool) bool {
	for _, v := range lockorder.Violations() {
		if v.Kind == lockorder.KindLongWait && v.Expected == expected {
			return true
		}
	}
	return false
}

// A long-wait whose wait ended does not fail (W6); when a wait of the
// same report (one lock, one holder, one line) is then under way again,
// the report fails again, and a later check counts it.
func TestALongWaitFailingAgainCountsAgain(t *testing.T) {
	setup(t)
	lockorder.Configure(lockorder.WithLongWait(50 * time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
	mu := lockorder.NewMutex("long-wait-again")
	hold := make(chan chan struct{})
	locked := make(chan struct{})
	go func() { // one holder goroutine: one report
		for release := range hold {
			mu.Lock()
			locked <- struct{}{}
			<-release
			mu.Unlock()
		}
	}()
	defer close(hold)

	r1 := make(chan struct{})
	hold <- r1
	<-locked
	done := make(chan struct{})
	go func() { waitFor(mu); close(done) }()
	require.Eventually(t, func() bool { return longWaitRecord(false) }, 10*time.Second, time.Millisecond)
	close(r1)
	<-done
	require.True(t, longWaitRecord(true), "the wait ended")
	require.NoError(t, lockordertest.Find(), "a slow wait that ended counted")

	r2 := make(chan struct{})
	hold <- r2
	<-locked
	done = make(chan struct{})
	go func() { waitFor(mu); close(done) }()
	require.Eventually(t, func() bool { return longWaitRecord(false) }, 10*time.Second, time.Millisecond)
	assert.Error(t, lockordertest.Find(), "a long-wait under way again counts")
	close(r2)
	<-done
}
