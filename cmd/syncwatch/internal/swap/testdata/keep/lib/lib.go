package lib

import "sync"

// Guard runs f holding mu.
func Guard(mu *sync.Mutex, f func()) { mu.Lock(); f(); mu.Unlock() }

// Shared is a lock the library hands out.
func Shared() *sync.Mutex { return new(sync.Mutex) }

// Two hands out a lock and an error.
func Two() (*sync.Mutex, error) { return new(sync.Mutex), nil }

// Locks are locks the library hands out in a slice.
var Locks = []*sync.Mutex{new(sync.Mutex)}
