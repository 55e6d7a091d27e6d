package watchdog_test

import (
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

// Step and Begin/End are on the loop's own path, once per iteration or
// per item of work.
func BenchmarkStep(b *testing.B) {
	loop := watchdog.New("bench-step", watchdog.WithBound(time.Minute))
	defer loop.Close()
	b.ReportAllocs()
	for b.Loop() {
		loop.Step()
	}
}

func BenchmarkBeginEnd(b *testing.B) {
	loop := watchdog.New("bench-begin-end", watchdog.WithBound(time.Minute))
	defer loop.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			loop.Begin()
			loop.End()
		}
	})
}
