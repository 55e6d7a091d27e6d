//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Precision (R21): a pool of workers takes a then b; once every one of
// them has been waited for, the inverse order is taken: by the goroutine
// that waited, or by a second pool it starts with WaitGroup.Go. Pools
// from hb.MaxSighters' old bound of 15 up to the one R21 now gives them
// (hb.MaxSighters, less the waiter's own entry in a clock): the cycle
// is ordered and is not reported. A worker that nobody waited for
// still makes it one.
func TestAPoolWaitedForOrdersTheInverseTakenAfter(t *testing.T) {
	starts := []struct {
		name  string
		start func(wg *lockorder.WaitGroup, f func())
	}{
		{"WaitGroup.Go", func(wg *lockorder.WaitGroup, f func()) { wg.Go(f) }},
		{"go and Done", func(wg *lockorder.WaitGroup, f func()) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f()
			}()
		}},
	}
	inverses := []struct {
		name    string
		inverse func(wg *lockorder.WaitGroup, n int, a, b *lockorder.Mutex)
	}{
		{"by the waiter", func(_ *lockorder.WaitGroup, _ int, a, b *lockorder.Mutex) { lockAB(b, a) }},
		{"by a second pool", func(wg *lockorder.WaitGroup, n int, a, b *lockorder.Mutex) {
			for range n {
				wg.Go(func() { lockAB(b, a) })
			}
			wg.Wait()
		}},
	}
	for _, n := range []int{16, 40, lockorder.MaxPool} {
		for _, s := range starts {
			for _, inv := range inverses {
				for _, stray := range []bool{false, true} {
					name := fmt.Sprintf("%d workers/%s/%s/stray=%v", n, s.name, inv.name, stray)
					t.Run(name, func(t *testing.T) {
						fresh(t)
						run(func() {
							a := lockorder.NewMutex("r21-pool-a")
							b := lockorder.NewMutex("r21-pool-b")
							var wg lockorder.WaitGroup
							for range n {
								s.start(&wg, func() { lockAB(a, b) })
							}
							wg.Wait()
							if stray {
								run(func() { lockAB(a, b) }) // not waited for with wg
							}
							inv.inverse(&wg, n, a, b)
						})
						if stray {
							assert.Len(t, only(lockorder.KindCycle), 1)
						} else {
							assert.Empty(t, only(lockorder.KindCycle))
						}
					})
				}
			}
		}
	}
}
