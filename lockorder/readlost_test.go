//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A goroutine keeps M (a Mutex) and, in rounds, read-locks R and takes
// more locks under it than read edges may wait (held.MaxWaiting). In
// round 1 the Wait of R->x0 is pushed out (dropped unrecorded). The
// acquisition's write edge M->x0 waits on M, which is kept across the
// rounds, so ProvingKey stays true (readLost does not stop it) and x0 is
// never recorded again in any later round, though R is released (its
// other edges proved) and re-taken each round. Before 71444ef (lost set)
// round 2 recorded R->x0 anew and R's release proved it. The real
// inversion x0 -> R (write) is then never reported.
func TestADroppedReadEdgeUnderAKeptWriteHoldIsRecordedInALaterRound(t *testing.T) {
	fresh(t)
	r, m := lockorder.NewRWMutex("pr-R"), lockorder.NewMutex("pr-M")
	xs := make([]*lockorder.Mutex, lockorder.MaxWaitingReadEdges+1)
	for i := range xs {
		xs[i] = lockorder.NewMutex(fmt.Sprintf("pr-x%d", i))
	}
	run(func() {
		m.Lock()
		for range 3 {
			r.RLock()
			for _, x := range xs {
				x.Lock()
				x.Unlock()
			}
			r.RUnlock()
		}
		m.Unlock()
	})
	// Control: x1 (whose Wait was not pushed out) and x0, each inverted.
	run(func() { lockAB(xs[1], r) })
	assert.NotEmpty(t, only(lockorder.KindCycle), "control: R->x1 was recorded")
	n := len(only(lockorder.KindCycle))
	run(func() { lockAB(xs[0], r) })
	assert.Greater(t, len(only(lockorder.KindCycle)), n, "R read-held then x0, and x0 then R: a deadlock, seen in rounds 2 and 3 with R re-taken")
}

// The same shape with the read hold handed off instead: another goroutine
// releases R (R13) while M is kept, and the goroutine read-locks R again.
// The chain of x0 under the new hold is the same key; its edge R->x0,
// whether its Wait fell with the hold or was dropped before (past
// held.MaxWaiting), is the new hold's, to be recorded and proved by its
// RUnlock.
func TestAReadHoldHandedOffThenTakenAgainRecordsItsEdges(t *testing.T) {
	for _, n := range []int{1, lockorder.MaxWaitingReadEdges + 1} {
		t.Run(fmt.Sprint(n, " locks"), func(t *testing.T) {
			fresh(t)
			r, m := lockorder.NewRWMutex("ho-R"), lockorder.NewMutex("ho-M")
			xs := make([]*lockorder.Mutex, n)
			for i := range xs {
				xs[i] = lockorder.NewMutex(fmt.Sprintf("ho-x%d", i))
			}
			taken, released, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				m.Lock()
				r.RLock() // released by the test goroutine
				for _, x := range xs {
					x.Lock()
					x.Unlock()
				}
				close(taken)
				<-released
				r.RLock() // a new hold, this goroutine's own
				xs[0].Lock()
				xs[0].Unlock()
				r.RUnlock()
				m.Unlock()
			}()
			<-taken
			r.RUnlock()
			close(released)
			<-done
			run(func() { lockAB(xs[0], r) })
			assert.NotEmpty(t, only(lockorder.KindCycle), "R read-held then x0, and x0 then R: a deadlock")
		})
	}
}
