package syncword

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// The layout relied on (sync.Mutex wraps internal/sync.Mutex since Go 1.24):
//
//	sync.Mutex { state int32; sema uint32 }
const (
	// MutexState is the offset in a sync.Mutex of its state word: 0 when
	// unlocked with no waiters, Locked when locked with no waiters.
	MutexState = 0
	// Locked is the state word of a locked sync.Mutex no one waits for.
	Locked = 1
)

// State returns m's state word.
func State(m *sync.Mutex) *int32 { return (*int32)(unsafe.Add(unsafe.Pointer(m), MutexState)) }

// Verify reports whether sync's layout in this build is the one the offsets
// describe, and the fast paths may be used. It drives a real sync.Mutex
// through its states, reading the word at the offset and changing it the
// way a fast path does. It is false when the
// fast paths are compiled out (see Enabled).
func Verify() bool {
	if !Enabled || unsafe.Sizeof(sync.Mutex{}) != 8 {
		return false
	}
	var m sync.Mutex
	s := State(&m)
	if atomic.LoadInt32(s) != 0 {
		return false
	}
	m.Lock()
	locked := atomic.LoadInt32(s) == Locked
	m.Unlock()
	if !locked || atomic.LoadInt32(s) != 0 {
		return false
	}
	// A fast-path lock must be one sync sees, and the other way round.
	if !atomic.CompareAndSwapInt32(s, 0, Locked) || m.TryLock() ||
		!atomic.CompareAndSwapInt32(s, Locked, 0) || !m.TryLock() ||
		atomic.CompareAndSwapInt32(s, 0, Locked) {
		return false
	}
	m.Unlock()

	return true
}
