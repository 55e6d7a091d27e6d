//go:build !syncwatch_off

package lockorder_test

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

func heapNow() uint64 {
	var ms runtime.MemStats
	for range 2 {
		runtime.GC()
	}
	time.Sleep(50 * time.Millisecond) // cleanups (trims) run after a GC
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

//go:noinline
func abandonOne(keep *[]*lockorder.Mutex) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		mu := new(lockorder.Mutex)
		mu.Lock()
		if os.Getenv("REPRO_UNLOCK") != "" {
			mu.Unlock()
		}
		if keep != nil {
			*keep = append(*keep, mu)
		}
	}()
	<-done
}

// TestReproAbandon measures the heap retained by REPRO_N goroutines that
// each lock a fresh Mutex and exit without unlocking it: the mutexes are
// garbage, or kept reachable with REPRO_REACH=1 (REPRO_UNLOCK=1 unlocks
// them, the control). REPRO_PROF names a heap profile to write, sampling
// every allocation. Run with REPRO=1, e.g.:
//
//	REPRO=1 REPRO_N=100000 go test -run TestReproAbandon -v ./lockorder
func TestReproAbandon(t *testing.T) {
	if os.Getenv("REPRO") == "" {
		t.Skip("REPRO unset")
	}
	if os.Getenv("REPRO_PROF") != "" {
		runtime.MemProfileRate = 1
	}
	n, _ := strconv.Atoi(os.Getenv("REPRO_N"))
	reach := os.Getenv("REPRO_REACH") != ""
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
	var keep []*lockorder.Mutex
	kp := (*[]*lockorder.Mutex)(nil)
	if reach {
		keep = make([]*lockorder.Mutex, 0, n)
		kp = &keep
	}
	before := heapNow()
	for range n {
		abandonOne(kp)
	}
	after := heapNow()
	t.Logf("n=%d reachable=%v before=%d after=%d per lock=%.1f B", n, reach, before, after, float64(int64(after)-int64(before))/float64(n))
	if reach {
		// The slice itself: 8 B a lock, and each Mutex.
		t.Logf("kept %d mutexes (sizeof slice elem 8B)", len(keep))
	}
	runtime.KeepAlive(keep)
	if f := os.Getenv("REPRO_PROF"); f != "" {
		pf, _ := os.Create(f)
		runtime.GC()
		_ = pprof.Lookup("heap").WriteTo(pf, 0)
		pf.Close()
	}
}
