package syncword

import (
	"sync"
	"sync/atomic"
)

// The fast paths as lockorder writes them out, for tests.

func TryLock(m *sync.Mutex) bool   { return atomic.CompareAndSwapInt32(State(m), 0, Locked) }
func TryUnlock(m *sync.Mutex) bool { return atomic.CompareAndSwapInt32(State(m), Locked, 0) }

func TryRLock(rw *sync.RWMutex) bool   { return atomic.CompareAndSwapInt32(Readers(rw), 0, 1) }
func TryRUnlock(rw *sync.RWMutex) bool { return atomic.CompareAndSwapInt32(Readers(rw), 1, 0) }
