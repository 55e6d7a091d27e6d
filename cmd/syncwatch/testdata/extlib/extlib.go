// Package extlib is a dependency with a lock of its own and an API typed
// with sync's.
package extlib

import "sync"

var libMu sync.Mutex

// WithLib runs f holding the library's lock.
func WithLib(f func()) {
	libMu.Lock()
	defer libMu.Unlock()
	f()
}

// Guard runs f holding mu.
func Guard(mu *sync.Mutex, f func()) {
	mu.Lock()
	defer mu.Unlock()
	f()
}
