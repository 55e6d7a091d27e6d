// Package cacheapp takes its lock around a library's, and the library's
// around its own; the library comes from the module cache.
package cacheapp

import (
	"sync"

	"example.com/extlib"
)

var registry struct {
	mu    sync.Mutex
	names []string
}

// Add adds name, then tells the library, holding the registry.
func Add(name string) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.names = append(registry.names, name)
	extlib.WithLib(func() {})
}

// Count counts the names from inside the library's lock.
func Count() (n int) {
	extlib.WithLib(func() {
		registry.mu.Lock()
		n = len(registry.names)
		registry.mu.Unlock()
	})
	return n
}
