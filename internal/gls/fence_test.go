package gls_test

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/internal/gls"
)

// stwPauses counts the stop-the-world pauses the runtime made for other
// reasons than garbage collection (ReadMemStats, goroutine dumps, ...).
func stwPauses() uint64 {
	s := []metrics.Sample{{Name: "/sched/pauses/total/other:seconds"}}
	metrics.Read(s)
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return n
}

// Where the kernel has an expedited memory barrier (Linux), reclaiming
// idle states stops nothing: a program with many short goroutines sees no
// pause from the states they leave, however many trims drop them.
func TestTrimsStopNothingWithMembarrier(t *testing.T) {
	if !gls.Expedited() {
		if runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") {
			t.Log("the kernel refuses membarrier here: fences stop the world")
		}
		t.Skip("no expedited barrier on this system")
	}
	pauses, fences, stopped := stwPauses(), gls.Fences(), gls.StoppedFences()
	for range 5 {
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(useOnce)
		}
		wg.Wait()
		gls.Trim()
	}
	if gls.Fences() == fences {
		t.Fatal("no trim took a fence: nothing was reclaimed")
	}
	if n := gls.StoppedFences() - stopped; n != 0 {
		t.Errorf("%d of %d fences stopped the world", n, gls.Fences()-fences)
	}
	// The runtime may stop the world for its own reasons meanwhile (a
	// GOMAXPROCS update): only the fences' own are counted above, and
	// this says what the program saw.
	t.Logf("%d stop-the-world pauses in all", stwPauses()-pauses)
}
