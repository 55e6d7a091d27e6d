//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A goroutine that keeps read locks and a lock and takes, in a loop, more
// locks than read edges may wait on it (held.MaxWaiting): the read edges
// pushed out are recorded anew once the write edges of their acquisitions
// are added, not at each Lock of the loop meanwhile, which stays on the
// fast path. An acquisition whose pushed-out Wait had as many read
// sources as there are read locks kept is not recorded anew while they
// stand: were it (a bound of 4 sources on what an acquisition remembers
// losing did that), its new Wait (5 sources) would push out the next
// one's, lost too, and every Lock of every round would be on the slow
// path. Nothing has been released: no hold is new, so there is nothing
// to record anew.
func TestALoopUnderKeptHoldsPastTheWaitsBoundTakesTheFastPath(t *testing.T) {
	for _, nr := range []int{1, 4, 5} {
		t.Run(fmt.Sprint(nr, " read locks"), func(t *testing.T) {
			fresh(t)
			rs := make([]*lockorder.RWMutex, nr)
			for i := range rs {
				rs[i] = lockorder.NewRWMutex(fmt.Sprintf("fr-r%d", i))
			}
			m := lockorder.NewMutex("fr-m")
			xs := make([]*lockorder.Mutex, lockorder.MaxWaitingReadEdges/nr+1)
			for i := range xs {
				xs[i] = lockorder.NewMutex(fmt.Sprintf("fr-x%d", i))
			}
			var mallocs uint64
			run(func() {
				for _, r := range rs {
					r.RLock()
				}
				m.Lock()
				for range 2 {
					for _, x := range xs {
						x.Lock()
						x.Unlock()
					}
				}
				// The fewest of three tries: the count is the process's,
				// and other goroutines (a monitor's, a test's left over)
				// may allocate meanwhile. The slow path at every Lock
				// allocates in each try.
				mallocs = ^uint64(0)
				for range 3 {
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					before := ms.Mallocs
					for range 10 {
						for _, x := range xs {
							x.Lock()
							x.Unlock()
						}
					}
					runtime.ReadMemStats(&ms)
					mallocs = min(mallocs, ms.Mallocs-before)
				}
				m.Unlock()
				for i := len(rs) - 1; i >= 0; i-- {
					rs[i].RUnlock()
				}
			})
			assert.Less(t, mallocs, uint64(len(xs)), "allocations of 10 rounds of the loop over %d locks", len(xs))
			assert.Empty(t, lockorder.Violations())
		})
	}
}
