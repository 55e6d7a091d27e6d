// Package mono reads the monotonic clock cheaply, as nanoseconds since the
// process started, for timing lock waits.
//
// time.Now reads the wall clock and the monotonic clock; a wait needs only
// the second, and on virtual machines whose clock source is slow each read
// costs tens of nanoseconds. A wait timed with Now, and converted with Time
// only when it is reported, pays for one monotonic read at each end.
package mono

import "time"

// base is the origin of the readings.
var base = time.Now()

// Now returns the nanoseconds elapsed on the monotonic clock since the
// process started.
func Now() int64 { return int64(time.Since(base)) }

// Since returns the time elapsed since the reading start.
func Since(start int64) time.Duration { return time.Duration(Now() - start) }

// Time converts a reading to a time.Time, on the wall clock as it was when
// the process started.
func Time(n int64) time.Time { return base.Add(time.Duration(n)) }
