// Package vlib is a library found only in a vendor directory: no proxy
// or module cache has it.
package vlib

import "sync"

var state struct {
	mu    sync.Mutex
	calls int
}

// Do runs f holding the library's lock.
func Do(f func()) {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.calls++
	f()
}
