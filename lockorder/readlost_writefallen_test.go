//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The mirror of TestASpoiledWaitPushedOutKeepsItsFallenSource. Under a read hold
// of R kept throughout, the goroutine locks M, takes X (chain [R M X]:
// R->X waits as a read Wait, M->X as a write edge on M), and M is then
// unlocked by another goroutine (a hand-off, R14/R23). It locks M again,
// a hold of its own, and takes X again: the stale M entry is pruned, so
// the chain is [R M X] once more, the same key. The read Wait for that
// key stands (R does), but the acquisition's write edge does not (M's
// Moves changed): X is to be recorded under the new hold of M, whose own
// Unlock proves it. Were the standing Wait enough (held.G.Standing), the
// inversion X -> M would be missed. Without the read hold (R) the same program
// is reported (TestWriteEdgeOfAHoldHandedOffThenTakenAgain).
func TestAStandingReadWaitDoesNotHideAFallenWriteEdge(t *testing.T) {
	for _, withR := range []bool{false, true} {
		name := "noR"
		if withR {
			name = "underR"
		}
		t.Run(name, func(t *testing.T) {
			fresh(t)
			r := lockorder.NewRWMutex("wf-R")
			m, x := lockorder.NewMutex("wf-M"), lockorder.NewMutex("wf-X")
			run(func() {
				if withR {
					r.RLock()
				}
				m.Lock()
				x.Lock() // M -> X, under a hold handed off below
				x.Unlock()
				run(m.Unlock) // another goroutine unlocks M
				m.Lock()      // a hold of its own
				x.Lock()      // M -> X under it: to be proved by the Unlock below
				x.Unlock()
				m.Unlock()
				if withR {
					r.RUnlock()
				}
			})
			run(func() { lockAB(x, m) })
			assert.NotEmpty(t, only(lockorder.KindCycle), "M then X under a hold of its own, and X then M")
		})
	}
}
