package syncword

import (
	"sync"
	"sync/atomic"
)

// The fast paths as lockorder writes them out, for tests.

func TryLock(m *sync.Mutex) bool   { return atomic.CompareAndSwapInt32(State(m), 0, Locked) }
func TryUnlock(m *sync.Mutex) bool { return atomic.CompareAndSwapInt32(State(m), Locked, 0) }
