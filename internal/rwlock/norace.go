//go:build !race

package rwlock

import "unsafe"

// RaceEnabled reports whether the race detector is on; see race.go.
const RaceEnabled = false

func raceDisable()                    {}
func raceEnable()                     {}
func raceAcquire(unsafe.Pointer)      {}
func raceRelease(unsafe.Pointer)      {}
func raceReleaseMerge(unsafe.Pointer) {}
