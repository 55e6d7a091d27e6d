package bench_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/lockorder"
)

// leakCheckNode is one object of the benchmark's heap: pointers, so that
// marking it costs what a real heap's objects do.
type leakCheckNode struct {
	next *leakCheckNode
	pad  [12]int64
}

// BenchmarkLeakCheck measures what lockordertest's leak check costs in a
// process with a live heap of 100 MB and 10,000 goroutines parked on a
// channel the benchmark can still close (so none is leaked): the runtime's
// leak detection (one garbage collection cycle) beside a plain
// runtime.GC, and ReportBlocked, which is what VerifyNone runs after its
// wait (the detection, a goroutine dump, the reports).
func BenchmarkLeakCheck(b *testing.B) {
	const (
		heapBytes  = 100 << 20
		goroutines = 10_000
	)
	nodes := make([]*leakCheckNode, heapBytes/int(unsafe.Sizeof(leakCheckNode{})))
	for i := range nodes {
		nodes[i] = &leakCheckNode{}
		if i > 0 {
			nodes[i].next = nodes[i-1]
		}
	}
	release := make(chan struct{})
	parked := make(chan struct{}, goroutines)
	for range goroutines {
		go func() {
			parked <- struct{}{}
			<-release
		}()
	}
	for range goroutines {
		<-parked
	}
	defer close(release)
	b.Run("runtime.GC", func(b *testing.B) {
		for b.Loop() {
			runtime.GC()
		}
	})
	b.Run("leak.Detect", func(b *testing.B) {
		if !leak.Supported() {
			b.Skipf("%s cannot detect leaked goroutines", runtime.Version())
		}
		for b.Loop() {
			leak.Detect()
		}
	})
	b.Run("ReportBlocked", func(b *testing.B) {
		for b.Loop() {
			lockorder.ReportBlocked(0)
		}
	})
	runtime.KeepAlive(nodes)
}
