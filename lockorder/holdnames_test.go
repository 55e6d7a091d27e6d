//go:build !syncwatch_off

package lockorder_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A deadlock report says what each waiting goroutine holds, in the words
// of the primitive's kind: a function started by WaitGroup.Go holds a
// place in the group, the goroutine running a Once's function holds that
// function.
func TestDeadlockNamesWhatAWaitGroupOrOnceHolderHolds(t *testing.T) {
	shortGrace(t)
	t.Run("WaitGroup", func(t *testing.T) {
		reportDeadlocks(t)
		results := lockorder.NewMutex("hn-results")
		var wg lockorder.WaitGroup
		locked := make(chan struct{})
		waited := make(chan struct{})
		go func() {
			results.Lock()
			wg.Go(func() {
				<-locked
				results.Lock() // waits for the Wait below, which waits for it
				results.Unlock()
			})
			close(locked)
			wg.Wait()
			close(waited)
		}()
		v := awaitKind(t, lockorder.KindDeadlock, time.Minute)
		assert.Contains(t, v.Detail, "it holds a place in WaitGroup lockorder_test.TestDeadlockNamesWhatAWaitGroupOrOnceHolderHolds")
		results.Unlock() // break the cycle
		<-waited
	})
	t.Run("Once", func(t *testing.T) {
		reportDeadlocks(t)
		mu := lockorder.NewMutex("hn-mu")
		var once lockorder.Once
		locked, running := make(chan struct{}), make(chan struct{})
		ran, done := make(chan struct{}), make(chan struct{})
		go func() {
			once.Do(func() {
				close(running)
				<-locked
				mu.Lock() // waits for the Do below, which waits for this function
				mu.Unlock()
			})
			close(ran)
		}()
		<-running
		go func() {
			mu.Lock()
			close(locked)
			once.Do(func() {})
			close(done)
		}()
		v := awaitKind(t, lockorder.KindDeadlock, time.Minute)
		assert.Contains(t, v.Detail, "it holds the running function of Once lockorder_test.TestDeadlockNamesWhatAWaitGroupOrOnceHolderHolds")
		mu.Unlock() // break the cycle
		<-ran
		<-done
	})
}
