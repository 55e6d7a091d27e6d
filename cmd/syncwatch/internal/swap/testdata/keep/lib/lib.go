package lib

import "sync"

// Guard runs f holding mu.
func Guard(mu *sync.Mutex, f func()) { mu.Lock(); f(); mu.Unlock() }

// Shared is a lock the library hands out.
func Shared() *sync.Mutex { return new(sync.Mutex) }
