//go:build !go1.24 || go1.28 || race

package syncword

// Enabled reports whether the fast paths are compiled in: only for the Go
// releases whose sync layout has been checked, and never under the race
// detector.
const Enabled = false
