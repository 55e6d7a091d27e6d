//go:build !syncwatch_off

package lockorder_test

import (
	"io"
	"runtime/pprof"
)

func pprofWriteHeap(w io.Writer) error { return pprof.Lookup("heap").WriteTo(w, 0) }
