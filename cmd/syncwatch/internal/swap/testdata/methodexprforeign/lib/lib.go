package lib

import "sync"

// Apply calls f on m.
func Apply(f func(*sync.Mutex), m *sync.Mutex) { f(m) }

// Touch locks and unlocks m.
func Touch(m *sync.Mutex) { m.Lock(); m.Unlock() }
