// Package chain is the lock-chain cache: the set of lock sequences whose
// order edges are already in the graph.
//
// Like lockdep's chain cache, it turns "have I seen this exact sequence of
// held locks before?" into one hash lookup. Readers never lock: Contains is a
// few atomic loads on a read-mostly open-addressing table. Add is called on
// the slow path, under the caller's lock; when the table fills it is replaced
// by a larger copy, and past a bound it is cleared, which only sends known
// chains through the slow path once more.
package chain

import (
	"sync"
	"sync/atomic"
)

// Key identifies a lock sequence. The zero Key is never stored.
type Key uint64

// Extend returns the key of the sequence k followed by elem. It mixes well
// enough that distinct sequences of small integers do not collide in
// practice, and it never returns zero.
func Extend(k Key, elem uint64) Key {
	x := uint64(k)*0x9E3779B97F4A7C15 ^ elem
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	if x == 0 {
		x = 1
	}
	return Key(x)
}

// Set is a concurrent set of keys. The zero Set is empty and ready to use.
type Set struct {
	tab atomic.Pointer[table]
	mu  sync.Mutex // serializes Add, Clear
	max int        // entries before the set is cleared; 0 means DefaultMax
}

// DefaultMax is the number of chains a Set holds before it starts over:
// far more than the distinct lock sequences of a program, while keeping
// the table under a few MiB when a program churns through short-lived
// locks whose chains can never be seen again.
const DefaultMax = 1 << 16

type table struct {
	slots []atomic.Uint64
	mask  uint64
	n     int
}

// Contains reports whether k is in the set. It never blocks.
func (s *Set) Contains(k Key) bool {
	t := s.tab.Load()
	if t == nil {
		return false
	}
	for i := uint64(k) & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].Load() {
		case uint64(k):
			return true
		case 0:
			return false
		}
	}
}

// Add inserts k. It reports whether k was new.
func (s *Set) Add(k Key) bool {
	if k == 0 {
		k = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tab.Load()
	limit := s.max
	if limit == 0 {
		limit = DefaultMax
	}
	switch {
	case t == nil:
		t = newTable(1024)
		s.tab.Store(t)
	case t.n >= limit:
		t = newTable(1024)
		s.tab.Store(t)
	case (t.n+1)*2 > len(t.slots):
		t = t.grow()
		s.tab.Store(t)
	}
	return t.insert(uint64(k))
}

// Len returns the number of keys in the set.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tab.Load(); t != nil {
		return t.n
	}
	return 0
}

// Clear empties the set.
func (s *Set) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tab.Store(nil)
}

// SetMax bounds the number of keys held before the set starts over.
func (s *Set) SetMax(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.max = n
}

func newTable(size int) *table {
	return &table{slots: make([]atomic.Uint64, size), mask: uint64(size - 1)}
}

func (t *table) insert(k uint64) bool {
	for i := k & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].Load() {
		case k:
			return false
		case 0:
			t.slots[i].Store(k)
			t.n++
			return true
		}
	}
}

func (t *table) grow() *table {
	nt := newTable(len(t.slots) * 2)
	for i := range t.slots {
		if k := t.slots[i].Load(); k != 0 {
			nt.insert(k)
		}
	}
	return nt
}
