// Package mono reads the monotonic clock cheaply, as nanoseconds since the
// process started, for timing lock waits.
//
// time.Now reads the wall clock and the monotonic clock; a wait needs only
// the second, and on virtual machines whose clock source is slow each read
// costs tens of nanoseconds. A wait timed with Now pays for one monotonic
// read at each end; when it is reported, its start on the wall clock is
// time.Now() less its duration (not the process's start plus the reading,
// which drifts when the wall clock is stepped or the machine sleeps).
package mono

import "time"

// base is the origin of the readings.
var base = time.Now()

// Now returns the nanoseconds elapsed on the monotonic clock since the
// process started.
func Now() int64 { return int64(time.Since(base)) }

// Since returns the time elapsed since the reading start.
func Since(start int64) time.Duration { return time.Duration(Now() - start) }
