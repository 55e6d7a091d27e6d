package staleness_test

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/staleness"
)

func BenchmarkPolicyCheck(b *testing.B) {
	p := staleness.Policy{MaxStaleness: 10}
	b.ReportAllocs()
	var v uint64
	for b.Loop() {
		v++
		if p.Check(v+5, v) != nil {
			b.Fatal("rejected")
		}
	}
}

// BenchmarkAdvance measures one worker advancing with nobody to wait for.
func BenchmarkAdvance(b *testing.B) {
	c := staleness.NewClock(1, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Advance(ctx, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdvanceParallel has one worker per goroutine and a bound loose
// enough that nobody waits: the cost of the shared clock lock.
func BenchmarkAdvanceParallel(b *testing.B) {
	const workers = 64
	c := staleness.NewClock(workers, math.MaxUint64)
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(workers / 2)
	b.RunParallel(func(pb *testing.PB) {
		w := int(next.Add(1)-1) % workers
		for pb.Next() {
			if _, err := c.Advance(ctx, w); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
