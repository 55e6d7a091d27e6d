// Package app locks its own lock around the library's, and the library's
// around its own.
package app

import (
	"sync"

	"example.com/extlib"
)

var mu sync.Mutex

// state is guarded by a lock that goes to extlib.Guard, typed *sync.Mutex.
type state struct {
	guard sync.Mutex
	n     int
}

// Outer takes mu, then the library's lock.
func Outer() {
	mu.Lock()
	defer mu.Unlock()
	extlib.WithLib(func() {})
}

// Inner takes the library's lock, then mu.
func Inner() {
	extlib.WithLib(func() {
		mu.Lock()
		mu.Unlock()
	})
}

// Bump adds one under the guard.
func Bump() int {
	var s state
	extlib.Guard(&s.guard, func() { s.n++ })
	return s.n
}
