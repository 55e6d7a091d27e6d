//go:build amd64 || arm64

package stack

import (
	"os"
	"runtime"
	"unsafe"
)

// callerFP returns the frame pointer of its caller's frame, or of the
// ABI wrapper that calls it for its caller (fpSkip accounts for it).
//
//go:noescape
func callerFP() unsafe.Pointer

// walk stores the return addresses of the frames from fp outward in pcs,
// following the saved frame pointers, as the runtime's tracer does, and
// returns how many it stored. It makes no call: the stack cannot move
// under it.
//
//go:nosplit
func walk(fp unsafe.Pointer, pcs []uintptr) int {
	i := 0
	for ; i < len(pcs) && fp != nil; i++ {
		pcs[i] = *(*uintptr)(unsafe.Add(fp, unsafe.Sizeof(uintptr(0)))) // the return address sits above the saved frame pointer
		fp = *(*unsafe.Pointer)(fp)
	}
	return i
}

// fpSkip is how many addresses a walk from callerFP in a function f
// records before the one runtime.Callers(2, ...) in f records first, the
// return address into f's caller; -1 if frame pointers are not used.
var fpSkip = calibrate()

// calibrate returns fpSkip. Frame pointers are followed only in a program
// with no cgo: a frame of C code, in a call into Go from C, may not keep
// them, and following them could fault (the runtime's tracer takes the
// same care). A cgo program counts one cgo call from its start.
// SYNCWATCH_FPUNWIND=0 turns them off.
func calibrate() int {
	if runtime.NumCgoCall() != 0 || os.Getenv("SYNCWATCH_FPUNWIND") == "0" {
		return -1
	}
	return probe()
}

// probe compares a walk with runtime.Callers in one function.
//
//go:noinline
func probe() int {
	var fps [8]uintptr
	n := walk(callerFP(), fps[:])
	var cs [1]uintptr
	if runtime.Callers(2, cs[:]) != 1 {
		return -1
	}
	for i, pc := range fps[:n] {
		if pc == cs[0] {
			return i
		}
	}
	return -1
}

// unwind stores in pcs the return addresses of the calling function's
// caller and outward, as runtime.Callers(2, pcs) would without expanding
// inlined calls, and returns how many; fp is callerFP() called by the
// calling function.
//
//go:nosplit
func unwind(fp unsafe.Pointer, pcs []uintptr) int {
	n := walk(fp, pcs)
	if n <= fpSkip {
		return 0
	}
	return copy(pcs, pcs[fpSkip:n])
}
