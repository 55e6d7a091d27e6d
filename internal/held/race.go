//go:build race

package held

import "runtime"

// Under the race detector, Stale reads another goroutine's entries, and the
// locks they point to, with nothing ordering the reads after the writes:
// it must not be flagged (see Stale), so the detector is off meanwhile.
func raceOff() { runtime.RaceDisable() }
func raceOn()  { runtime.RaceEnable() }
