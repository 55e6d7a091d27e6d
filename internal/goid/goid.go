// Package goid gives the calling goroutine's id.
//
// The runtime does not export goroutine ids. [ID] reads the id from the
// runtime's goroutine structure through github.com/petermattis/goid, which
// costs about a nanosecond. [Slow] parses the header of runtime.Stack, which
// is the documented (and slow) way; the tests compare the two on every Go
// release so that a runtime change which moves the field fails loudly instead
// of silently mixing up goroutines.
package goid

import (
	"runtime"
	"strconv"

	pgoid "github.com/petermattis/goid"
)

// ID returns the id of the calling goroutine. Ids are positive and are never
// reused during the life of the process.
func ID() int64 { return pgoid.Get() }

// Slow returns the id of the calling goroutine by parsing the first line of
// runtime.Stack ("goroutine 17 [running]:"). It returns 0 if the line cannot
// be parsed.
func Slow() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	return Parse(buf[:n])
}

// Parse returns the id in a goroutine header of the form "goroutine N [",
// or 0 if b does not start with one.
func Parse(b []byte) int64 {
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	b = b[len(prefix):]
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	id, err := strconv.ParseInt(string(b[:i]), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
