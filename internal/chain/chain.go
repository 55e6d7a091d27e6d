// Package chain is the lock-chain cache: the set of lock sequences whose
// order edges are already in the graph, each with the goroutine clock
// (internal/hb) that recorded it.
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

// Many is the owner of a chain that MaxOwners goroutine clocks have
// recorded: its edges are known to be of so many goroutines that no
// order between them is kept (docs/RULES.md R21), and any goroutine may
// take it without recording it.
const Many = ^uint64(0)

// MaxOwners is how many goroutine clocks record a chain before it is
// Many's: a pool of workers up to one less, each recording the chain,
// keeps every worker's sighting (docs/RULES.md R21). Each of them pays
// the slow path once for it.
const MaxOwners = 256

// Set is a concurrent set of keys, each with its owners: the serials of
// the goroutine clocks that recorded it, or Many. The zero Set is empty
// and ready to use.
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
	slots []slot
	mask  uint64
	n     int
}

// slot is a key, its first owner, and the others, if any. A reader that
// finds the key may see the owner 0 while Add is storing it: Has reads
// that as absent.
type slot struct {
	key, owner atomic.Uint64
	more       atomic.Pointer[owners] // owners after the first
}

// Contains reports whether k is in the set, whoever recorded it. It never
// blocks.
func (s *Set) Contains(k Key) bool {
	return s.find(k) != nil
}

// Has reports whether k is in the set for owner: recorded by it, or
// Many's. It never blocks.
func (s *Set) Has(k Key, owner uint64) bool {
	sl := s.find(k)
	if sl == nil {
		return false
	}
	switch o := sl.owner.Load(); o {
	case owner, Many:
		return o != 0
	}
	return sl.more.Load().has(owner)
}

// find returns k's slot, or nil.
func (s *Set) find(k Key) *slot {
	t := s.tab.Load()
	if t == nil {
		return nil
	}
	for i := uint64(k) & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].key.Load() {
		case uint64(k):
			if t.slots[i].owner.Load() == 0 {
				return nil
			}
			return &t.slots[i]
		case 0:
			return nil
		}
	}
}

// Add inserts k, recorded by owner (not 0), or adds owner to k's owners;
// the MaxOwners'th makes k Many's. It reports whether k was new.
func (s *Set) Add(k Key, owner uint64) bool {
	if owner == 0 {
		panic("chain: a key with no owner")
	}
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
	return t.insert(uint64(k), owner)
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
	return &table{slots: make([]slot, size), mask: uint64(size - 1)}
}

func (t *table) insert(k, owner uint64) bool {
	for i := k & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		switch sl.key.Load() {
		case k:
			sl.addOwner(owner)
			return false
		case 0:
			sl.key.Store(k)
			sl.owner.Store(owner)
			t.n++
			return true
		}
	}
}

// addOwner adds owner to sl's owners. Called with the Set's lock held.
func (sl *slot) addOwner(owner uint64) {
	o := sl.owner.Load()
	if o == owner || o == Many {
		return
	}
	more := sl.more.Load()
	if more.has(owner) {
		return
	}
	if owner == Many || 1+more.len()+1 >= MaxOwners {
		sl.owner.Store(Many)
		sl.more.Store(nil)
		return
	}
	if more == nil || (more.n+1)*2 > len(more.ids) {
		more = more.grown()
		sl.more.Store(more)
	}
	more.add(owner)
}

func (t *table) grow() *table {
	nt := newTable(len(t.slots) * 2)
	for i := range t.slots {
		sl := &t.slots[i]
		if k := sl.key.Load(); k != 0 {
			nt.insert(k, sl.owner.Load())
			if p := sl.more.Load(); p != nil {
				nt.slots[nt.find(k)].more.Store(p)
			}
		}
	}
	return nt
}

// find returns the index of k's slot in t, which holds k.
func (t *table) find(k uint64) uint64 {
	i := k & t.mask
	for t.slots[i].key.Load() != k {
		i = (i + 1) & t.mask
	}
	return i
}
