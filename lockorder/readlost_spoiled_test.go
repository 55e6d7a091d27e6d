//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A Wait with two read sources, R2 (kept) and R1 (handed off), is pushed
// out past held.MaxWaiting after R1 fell. held's waits.hold sweeps the fallen
// source away first, so the lostWait proving.lose gets lists R2 alone:
// the acquisition becomes readLost with lostSrcs [R2], which stands, and
// the "spoiled" mark (R1 fell) is lost. The goroutine, still holding the
// Mutex M (so x0's write edge M->x0 waits and is live), read-locks R1
// again, its own new hold, on top of the stack: the chain [M R2 R1 x0] is
// the same key as before the hand-off (the stale R1 entry was pruned).
// ProvingKey(x0's key) is true, so x0 is not recorded under the new hold:
// R1->x0 is never recorded, and the inversion x0 -> R1 (write) is missed.
// RULES.md R23: "a repeat once one of those read holds has been released
// by ... another goroutine (R13: lostSrc), or a repeat whose read Wait has
// such a source, is recorded anew".
//
// With pushOut=false (no pushing out) the same program is reported: the
// control.
func TestASpoiledWaitPushedOutKeepsItsFallenSource(t *testing.T) {
	for _, pushOut := range []bool{false, true} {
		t.Run(fmt.Sprint("pushOut=", pushOut), func(t *testing.T) {
			fresh(t)
			m := lockorder.NewMutex("sp-M")
			r1, r2 := lockorder.NewRWMutex("sp-R1"), lockorder.NewRWMutex("sp-R2")
			x0 := lockorder.NewMutex("sp-x0")
			ys := make([]*lockorder.Mutex, lockorder.MaxWaitingReadEdges)
			for i := range ys {
				ys[i] = lockorder.NewMutex(fmt.Sprintf("sp-y%d", i))
			}
			taken, released, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				m.Lock()
				r2.RLock()
				r1.RLock() // released by the test goroutine
				x0.Lock()  // Wait{R2, R1} -> x0; M -> x0 waits on M
				x0.Unlock()
				close(taken)
				<-released
				r1.RLock() // a new hold, this goroutine's own: [M R2 R1]
				if pushOut {
					for _, y := range ys { // new chains, each a Wait {R2, R1'}: x0's Wait is pushed out
						y.Lock()
						y.Unlock()
					}
				}
				x0.Lock() // the chain [M R2 R1 x0] again, under the new hold of R1
				x0.Unlock()
				r1.RUnlock() // proves R1 -> x0, if it waits
				r2.RUnlock()
				m.Unlock()
			}()
			<-taken
			r1.RUnlock() // a hand-off (R13)
			close(released)
			<-done
			run(func() { lockAB(x0, r1) })
			assert.NotEmpty(t, only(lockorder.KindCycle), "R1 read-held (own hold) then x0, and x0 then R1: a deadlock")
		})
	}
}
