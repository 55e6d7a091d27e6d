// Package mono reads the monotonic clock cheaply, as nanoseconds since the
// process started, for timing lock waits.
//
// It reads the runtime's own monotonic clock, which is real time even in
// a testing/synctest bubble: there time.Now and time.Since follow the
// bubble's fake clock, which jumps ahead whenever every goroutine of the
// bubble is blocked, and a wait of no real length would look long. A wait
// is timed with one read at each end; when it is reported, its start on
// the wall clock is time.Now() less its duration (not the process's start
// plus the reading, which drifts when the wall clock is stepped or the
// machine sleeps).
package mono

import (
	"time"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock, which many packages read
// this way (the runtime keeps the symbol reachable for them).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// base is the origin of the readings.
var base = nanotime()

// Now returns the nanoseconds elapsed on the monotonic clock since the
// process started.
func Now() int64 { return nanotime() - base }

// Since returns the time elapsed since the reading start.
func Since(start int64) time.Duration { return time.Duration(Now() - start) }
