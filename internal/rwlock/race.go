//go:build race

package rwlock

import (
	"runtime"
	"unsafe"
)

// RaceEnabled reports whether the race detector is on. With it, the
// reader count is updated where the detector does not see it, as sync
// does, and the lock tells the detector itself which goroutines it orders:
// a writer after the readers and writer before it, a reader after the
// writer before it, and never a reader after another reader. (Left visible,
// the count's atomic adds would order every reader after every earlier
// one, and hide races between readers.)
const RaceEnabled = true

func raceDisable()                      { runtime.RaceDisable() }
func raceEnable()                       { runtime.RaceEnable() }
func raceAcquire(p unsafe.Pointer)      { runtime.RaceAcquire(p) }
func raceRelease(p unsafe.Pointer)      { runtime.RaceRelease(p) }
func raceReleaseMerge(p unsafe.Pointer) { runtime.RaceReleaseMerge(p) }
