package gls

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// fence makes the owners' plain busy marks safe to read (see the
// handshake): once it returns, every store a goroutine made before it
// began is visible to the caller, and every goroutine that runs after it
// sees the caller's earlier stores (docs/RULES.md R17).
//
// Where the kernel offers an expedited process-wide memory barrier
// (Linux's membarrier, fence_membarrier.go), that is the fence: each
// processor running one of the program's threads executes a full barrier,
// and the others pass through one when they are next scheduled; nothing
// is stopped, and it costs a microsecond. Elsewhere, until the process is
// registered for it, or if SYNCWATCH_MEMBARRIER=0 is set, the fence stops
// the world for a moment (runtime.ReadMemStats), which costs per
// processor, not per goroutine, but is a pause the whole program sees.
func fence() {
	if !(membarrierReady.Load() && !stwFences.Load() && membarrier()) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		stoppedFences.Add(1)
	}
	fences.Add(1)
}

var (
	// membarrierReady is set once the process is registered for the
	// kernel's barrier. Registering waits for the kernel (tens of
	// milliseconds), so it is done on a goroutine of its own, started
	// from the first trim after a collection (startMembarrier), never on
	// a goroutine that is taking a lock.
	membarrierReady atomic.Bool
	membarrierOnce  sync.Once
	membarrierDone  = make(chan struct{})
	// stwFences makes every fence stop the world, for tests of that way.
	stwFences atomic.Bool
	// stoppedFences counts the fences that stopped the world.
	stoppedFences atomic.Int64
)

// startMembarrier starts registering the process for the kernel's barrier,
// once, unless SYNCWATCH_MEMBARRIER=0 asks not to (a seccomp filter that
// kills a process for an unknown system call would otherwise end it).
func startMembarrier() {
	membarrierOnce.Do(func() {
		if os.Getenv("SYNCWATCH_MEMBARRIER") == "0" {
			close(membarrierDone)
			return
		}
		go func() {
			defer close(membarrierDone)
			membarrierReady.Store(registerMembarrier())
		}()
	})
}

// Expedited starts registering for the kernel's barrier if that has not
// begun, waits for it, and reports whether fences use it rather than a
// stop-the-world.
func Expedited() bool {
	startMembarrier()
	<-membarrierDone
	return membarrierReady.Load()
}

// StopTheWorldFences makes every fence stop the world while on is set, so
// that tests can run the handshake under both fences.
func StopTheWorldFences(on bool) { stwFences.Store(on) }

// StoppedFences reports how many fences stopped the world.
func StoppedFences() int64 { return stoppedFences.Load() }
