package gls

import (
	"runtime"
	"sync"
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
// is stopped, and it costs microseconds. Elsewhere the fence stops the
// world for a moment (runtime.ReadMemStats), which costs per processor,
// not per goroutine, but is a pause the whole program sees.
func fence() {
	if !expedited() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
	}
	fences.Add(1)
}

// expedited runs the kernel's expedited barrier and reports whether it
// could.
func expedited() bool { return Expedited() && membarrier() }

var (
	membarrierOnce sync.Once
	membarrierOK   bool
)

// Expedited reports whether fences use the kernel's barrier rather than a
// stop-the-world. Registering for it is tried once, at the first call.
func Expedited() bool {
	membarrierOnce.Do(func() { membarrierOK = registerMembarrier() })
	return membarrierOK
}
