//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Precision (R21): a goroutine that WaitGroup.Go started knows what its
// starter knew, and passes it on even if it never takes a lock of its
// own (it has no state to keep it in): to the goroutines it starts with
// Go, and, through its Done, to whoever waits for its group. The inverse
// order, taken before by the starter, is then ordered before the edge
// taken after: no cycle. Each shape runs with Go's table of started
// goroutines in use and full (the group's own map).
func TestAGoroutineWithNoLocksPassesOnWhatGoGaveIt(t *testing.T) {
	shapes := []struct {
		name string
		// after takes a then b, ordered after the caller's b then a
		// only through a goroutine Go started that takes no lock.
		after func(a, b *lockorder.Mutex)
	}{
		{"to the workers it starts", func(a, b *lockorder.Mutex) {
			var outer lockorder.WaitGroup
			outer.Go(func() { // takes no lock before it forks
				var inner lockorder.WaitGroup
				inner.Go(func() { lockAB(a, b) })
				inner.Wait()
			})
			outer.Wait()
		}},
		{"to a waiter of its group", func(a, b *lockorder.Mutex) {
			var wg lockorder.WaitGroup
			wg.Go(func() {}) // takes nothing: its Done alone orders the waiter
			// The waiter is another goroutine, started with go (a channel
			// would order it too, but syncwatch cannot see channels).
			run(func() {
				wg.Wait()
				lockAB(a, b)
			})
		}},
		{"two levels down", func(a, b *lockorder.Mutex) {
			var outer lockorder.WaitGroup
			outer.Go(func() {
				var mid lockorder.WaitGroup
				mid.Go(func() {
					var inner lockorder.WaitGroup
					inner.Go(func() { lockAB(a, b) })
					inner.Wait()
				})
				mid.Wait()
			})
			outer.Wait()
		}},
	}
	for _, sh := range shapes {
		for _, full := range []bool{false, true} {
			name := sh.name
			if full {
				name += ", Go's table full"
			}
			t.Run(name, func(t *testing.T) {
				fresh(t)
				if full {
					lockorder.SetGoStartedOff(true)
					t.Cleanup(func() { lockorder.SetGoStartedOff(false) })
				}
				a := lockorder.NewMutex("r21-passon-a")
				b := lockorder.NewMutex("r21-passon-b")
				run(func() {
					lockAB(b, a)
					sh.after(a, b)
				})
				assert.Empty(t, only(lockorder.KindCycle), "b then a was taken before the goroutine that took a then b was started")
			})
		}
	}
	// Not ordered: the same shapes with the inverse taken by a goroutine
	// nothing orders (started with go, not waited for by the Go caller)
	// are a cycle.
	for _, sh := range shapes {
		t.Run(sh.name+", the inverse unordered", func(t *testing.T) {
			fresh(t)
			a := lockorder.NewMutex("r21-passon-a")
			b := lockorder.NewMutex("r21-passon-b")
			inverse := make(chan struct{})
			go func() {
				lockAB(b, a)
				close(inverse)
			}()
			<-inverse // a channel: syncwatch does not see it order anything
			run(func() { sh.after(a, b) })
			assert.Len(t, only(lockorder.KindCycle), 1)
		})
	}
}

// Precision (R21): a goroutine that learnt what others knew (a Wait) but
// has no clock of its own (it took no lock) passes that on through the
// Once it completes: b then a, Done, Wait, the Once's completion, a Do
// that finds it done, a then b are ordered (found in review of add69d7).
func TestAOnceCompletedByAGoroutineWithNoClockPassesOnWhatItLearnt(t *testing.T) {
	fresh(t)
	a := lockorder.NewMutex("r21-once-a")
	b := lockorder.NewMutex("r21-once-b")
	var wg lockorder.WaitGroup
	var once lockorder.Once
	wg.Add(1)
	run(func() { lockAB(b, a); wg.Done() })
	run(func() { wg.Wait(); once.Do(func() {}) })
	run(func() { once.Do(func() {}); lockAB(a, b) })
	assert.Empty(t, only(lockorder.KindCycle), "b then a < Done < Wait < the Once's completion < Do < a then b")
}
