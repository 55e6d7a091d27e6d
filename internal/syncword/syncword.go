package syncword

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// The layout relied on (sync.Mutex wraps internal/sync.Mutex since Go 1.24):
//
//	sync.Mutex   { state int32; sema uint32 }
//	sync.RWMutex { w Mutex; writerSem, readerSem uint32; readerCount, readerWait atomic.Int32 }
const (
	// MutexState is the offset in a sync.Mutex of its state word: 0 when
	// unlocked with no waiters, Locked when locked with no waiters.
	MutexState = 0
	// Locked is the state word of a locked sync.Mutex no one waits for.
	Locked = 1
	// ReaderCount is the offset in a sync.RWMutex of its reader count: the
	// number of readers, or negative while a writer holds or waits for it.
	ReaderCount = 16
)

// State returns m's state word.
func State(m *sync.Mutex) *int32 { return (*int32)(unsafe.Add(unsafe.Pointer(m), MutexState)) }

// Readers returns rw's reader count.
func Readers(rw *sync.RWMutex) *int32 {
	return (*int32)(unsafe.Add(unsafe.Pointer(rw), ReaderCount))
}

// Verify reports whether sync's layout in this build is the one the offsets
// describe, and the fast paths may be used. It drives real sync.Mutex and
// sync.RWMutex values through their states, reading the words at the
// offsets and changing them the way a fast path does. It is false when the
// fast paths are compiled out (see Enabled).
func Verify() bool {
	if !Enabled || unsafe.Sizeof(sync.Mutex{}) != 8 || unsafe.Sizeof(sync.RWMutex{}) != 24 {
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

	var rw sync.RWMutex
	r := Readers(&rw)
	rw.RLock()
	rw.RLock()
	readers := atomic.LoadInt32(r)
	rw.RUnlock()
	rw.RUnlock()
	if readers != 2 || atomic.LoadInt32(r) != 0 {
		return false
	}
	rw.Lock()
	writer := atomic.LoadInt32(r) < 0 && atomic.LoadInt32(State((*sync.Mutex)(unsafe.Pointer(&rw)))) == Locked
	rw.Unlock()
	if !writer || atomic.LoadInt32(r) != 0 {
		return false
	}
	if !atomic.CompareAndSwapInt32(r, 0, 1) || rw.TryLock() || !rw.TryRLock() {
		return false
	}
	rw.RUnlock()
	if !atomic.CompareAndSwapInt32(r, 1, 0) || !rw.TryLock() {
		return false
	}
	rw.Unlock()
	return true
}
