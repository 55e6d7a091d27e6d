// Package gls is goroutine-local storage: for each goroutine that asks,
// its own *held.G, found from its id.
//
// Go has no goroutine-local storage, so the states live in a table indexed
// by goroutine id. A goroutine finds its own with one atomic load (ids are
// sequential, so its slot is usually the id modulo the table size); it
// claims a slot with one compare-and-swap the first time it asks, and keeps
// it. No global lock is taken on this path, and the cost does not depend
// on what other goroutines do.
//
// Goroutines die without telling anyone. When the table fills up, a sweep
// lists the live goroutines (runtime.Stack) and frees the slots of dead
// ones, so the table stays bounded by the number of live goroutines that
// ask. Goroutines that find no slot use a small overflow map. Why a state
// lost here would only hide reports, never make one: docs/RULES.md R17.
package gls

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/held"
)

type slot struct {
	owner atomic.Int64
	g     atomic.Pointer[held.G]
}

const (
	tableSize = 1 << 13
	probe     = 8
)

var (
	table   [tableSize]slot
	claimed atomic.Int64

	sweepMu    sync.Mutex // one sweep at a time; never held with slowMu
	slowMu     sync.Mutex // guards overflow and lastSweep
	overflow   = map[int64]*held.G{}
	lastSweep  int64 // claimed count after the last sweep
	sweepCount atomic.Int64
)

// The three lookups. Callers pass the calling goroutine's id (goid.ID),
// except for Find, which any goroutine may call for any id.

// Home returns goroutine id's state if it sits in its home slot, where it
// almost always is, or nil. It is small enough to inline: the hot path's
// lookup, with Get as its fallback.
func Home(id int64) *held.G {
	if s := &table[uint64(id)&(tableSize-1)]; s.owner.Load() == id {
		return s.g.Load()
	}
	return nil
}

// Get returns the state of the calling goroutine, whose id is id, giving
// it one if it has none.
func Get(id int64) *held.G {
	if g := Home(id); g != nil {
		return g
	}
	return get(id)
}

// Find returns goroutine id's state, or nil; it never gives one. Only
// G.ID may be read from another goroutine's state.
func Find(id int64) *held.G {
	i := uint64(id) & (tableSize - 1)
	if s := &table[i]; s.owner.Load() == id {
		return s.g.Load()
	}
	for p := uint64(1); p < probe; p++ {
		if s := &table[(i+p)&(tableSize-1)]; s.owner.Load() == id {
			return s.g.Load()
		}
	}
	slowMu.Lock()
	g := overflow[id]
	slowMu.Unlock()
	return g
}

func get(id int64) *held.G {
	if g := Find(id); g != nil {
		return g
	}
	if g := claim(id); g != nil {
		return g
	}
	// The probe window is full. Free the slots of dead goroutines if enough
	// states were created since the last sweep, then try again. A sweep
	// stops the world for a time that grows with the number of goroutines,
	// so it waits for as many new states as there are goroutines: its cost
	// is spread over them, however many idle goroutines the program has,
	// and the states stay bounded by about twice the live goroutines.
	slowMu.Lock()
	due := claimed.Load()+int64(len(overflow)) > lastSweep+max(tableSize/8, int64(runtime.NumGoroutine()))
	slowMu.Unlock()
	if due && sweepMu.TryLock() {
		sweep()
		slowMu.Lock()
		lastSweep = claimed.Load() + int64(len(overflow))
		slowMu.Unlock()
		sweepMu.Unlock()
		if g := claim(id); g != nil {
			return g
		}
	}
	slowMu.Lock()
	defer slowMu.Unlock()
	g := overflow[id]
	if g == nil {
		g = held.New(id)
		overflow[id] = g
	}
	return g
}

func claim(id int64) *held.G {
	i := uint64(id) & (tableSize - 1)
	for p := uint64(0); p < probe; p++ {
		s := &table[(i+p)&(tableSize-1)]
		if s.owner.Load() != 0 || !s.owner.CompareAndSwap(0, id) {
			continue
		}
		// A fresh state each time: the previous owner's is never touched
		// again, since nothing orders its last writes (it just exited)
		// before ours.
		g := held.New(id)
		s.g.Store(g)
		claimed.Add(1)
		return g
	}
	return nil
}

// Sweep frees the state of goroutines that have exited. It runs by itself
// when the table fills up; tests call it directly.
func Sweep() {
	sweepMu.Lock()
	defer sweepMu.Unlock()
	sweep()
}

// sweep is Sweep with sweepMu held: two sweeps at once could each see the
// other's freshly claimed slots as candidates.
func sweep() {
	// Collect candidate owners before listing live goroutines: a goroutine
	// that claims a slot after the listing is not a candidate.
	var cands []int
	for i := range table {
		if table[i].owner.Load() != 0 {
			cands = append(cands, i)
		}
	}
	slowMu.Lock()
	var ocands []int64
	for id := range overflow {
		ocands = append(ocands, id)
	}
	slowMu.Unlock()
	live := liveGoroutines()
	for _, i := range cands {
		s := &table[i]
		id := s.owner.Load()
		if id != 0 && !live[id] && s.owner.CompareAndSwap(id, 0) {
			claimed.Add(-1)
		}
	}
	slowMu.Lock()
	for _, id := range ocands {
		if !live[id] {
			delete(overflow, id)
		}
	}
	slowMu.Unlock()
	sweepCount.Add(1)
}

// Stats reports how many goroutine states exist, for tests of boundedness.
func Stats() (claimedSlots, overflowed int, sweeps int64) {
	slowMu.Lock()
	defer slowMu.Unlock()
	return int(claimed.Load()), len(overflow), sweepCount.Load()
}

// States returns the state of every goroutine that has one now.
func States() []*held.G {
	var out []*held.G
	for i := range table {
		s := &table[i]
		if s.owner.Load() != 0 {
			if g := s.g.Load(); g != nil {
				out = append(out, g)
			}
		}
	}
	slowMu.Lock()
	for _, g := range overflow {
		out = append(out, g)
	}
	slowMu.Unlock()
	return out
}
