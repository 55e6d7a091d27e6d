package bench_test

import (
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// freshGroups is how many groups one op of case (o) makes.
const freshGroups = 100_000

// BenchmarkFreshGroups is case (o): a function started by WaitGroup.Go
// that, for each request, makes a WaitGroup of its own, counts one task
// and waits for it, as a log writer's callers wait for their sync. Every
// group is new, and every Wait is made under the Go'd function's hold of
// its group: in check mode, an edge into a new node (RULES.md R22 keeps
// it for the group's first Go). An op makes freshGroups groups; run it
// with -benchtime 1x. It reports the time per group (ns/group): the
// group's name and its Wait's stack cost one unwind.
func BenchmarkFreshGroups(b *testing.B) {
	b.Run("impl=sync", func(b *testing.B) {
		var outer sync.WaitGroup
		for b.Loop() {
			outer.Go(func() {
				for range freshGroups {
					wg := new(sync.WaitGroup)
					wg.Add(1)
					wg.Done()
					wg.Wait()
				}
			})
			outer.Wait()
		}
		perGroup(b)
	})
	if !instrumented {
		return
	}
	b.Run("impl=check", func(b *testing.B) {
		lockorder.Reset()
		defer lockorder.Reset()
		useMode(b, lockorder.ModeCheck)
		var outer lockorder.WaitGroup
		for b.Loop() {
			outer.Go(func() {
				for range freshGroups {
					wg := new(lockorder.WaitGroup)
					wg.Add(1)
					wg.Done()
					wg.Wait()
				}
			})
			outer.Wait()
		}
		perGroup(b)
	})
}

// perGroup reports b's time per group of case (o).
func perGroup(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*freshGroups), "ns/group")
}
