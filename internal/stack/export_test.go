package stack

import "runtime"

// Symbolized returns how many stacks have been symbolized.
func Symbolized() int64 { return symbolized.Load() }

// FPSkip is fpSkip: -1 if frame pointers are not followed.
func FPSkip() int { return int(fpSkip) }

// Both captures its caller's stack as Capture does and as
// runtime.Callers does, and takes a Trace of it.
//
//go:noinline
func Both() (fast, slow ID, trace []uintptr) {
	var t Trace
	t.Take()
	return Capture(), captureSlow(), t.PCs()
}

//go:noinline
func captureSlow() ID {
	var pcs [MaxDepth + 6]uintptr
	n := runtime.Callers(2, pcs[:])
	return defaultTable.intern(pcs[:n])
}
