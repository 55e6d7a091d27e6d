// Package gls is goroutine-local storage: for each goroutine that asks,
// its own *held.G, found from its id.
//
// Go has no goroutine-local storage, so the states live in a table indexed
// by goroutine id. A goroutine finds its own with two atomic loads (ids
// are sequential, so its slot is usually the id modulo the table size); it
// claims a slot with a compare-and-swap the first time it asks. No global
// lock is taken on this path, and the cost does not depend on what other
// goroutines do.
//
// Goroutines die without telling anyone, and finding out which have exited
// takes a dump of every goroutine, a stop-the-world as long as there are
// goroutines. So the table never asks. It reclaims idle states instead: a
// state that holds nothing (held.G.Busy is false) may be given to another
// goroutine, or dropped, whether its owner is alive or not, by the
// handshake below. The states stay bounded by the goroutines that hold
// locks, plus the table's size. Goroutines that find no slot use an
// overflow map, trimmed the same way.
//
// # The handshake
//
// A slot's owner word holds its goroutine's id, or minus it while another
// goroutine decides whether to take the slot (the reclaimer), or 0 when
// free. Both sides use Go's atomics, which are sequentially consistent:
//
//   - The owner marks its state busy (held.G.Wake), then loads the owner
//     word. If it reads its id, the state is its own until it rests
//     (held.G.Rest); if minus its id, it waits for the reclaimer to decide;
//     otherwise the state was taken, and it finds or claims another.
//   - The reclaimer swaps the owner word from id to minus id, then loads
//     the state's busy mark (and the slot's state pointer, which the owner
//     may have set meanwhile). If either changed or is busy, it puts the
//     id back; otherwise the slot is its to reuse or to clear.
//
// Whatever the interleaving, one of the two sees the other's write: either
// the reclaimer backs off, or the owner learns that it lost the state
// before writing to it. The reclaimer never writes into a taken state: it
// installs a new one. So an owner writing to a state it has lost (possible
// only after it rested it, within the same call) loses those writes and
// nothing else.
//
// # Why a lost state only hides reports
//
// A state is taken only while idle: it holds no lock entry and its owner
// runs no report handler, so no hold is forgotten (held-by-exited, a
// recursive lock and an Unlock of one's own lock still see every hold).
// What an idle state may still carry is evidence waiting to be proved:
// held-back reports (held.Pending) and order edges from read holds
// (held.Wait); losing them loses reports, never makes one. Its creation
// number (held.G.Seq) is what the initialisation-write rule (lockorder's
// class.Lock.Use and Witness) counts a goroutine by: a goroutine that lost
// its state gets a new, higher number, so it counts as having come later,
// and a later goroutine is never a witness that shows a lock shared; the
// writer itself, renumbered, is not one either. No goroutine is ever
// given another's number: a trimmed state is revived only for its own
// goroutine, with its own number.
package gls

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/held"
)

type slot struct {
	owner atomic.Int64 // id, -id while a reclaimer decides, 0 if free
	g     atomic.Pointer[held.G]
	// seq is the Seq of the state a trim dropped (g is then nil), for the
	// owner to revive it with (held.Revive). Written by the trimmer while
	// it holds the slot (owner -id).
	seq atomic.Uint64
	_   uint64
}

const (
	tableSize = 1 << 13
	probe     = 8
	// trimFloor is how many states the table keeps through a trim without
	// dropping the idle ones: a program with few goroutines never loses
	// their states' creation numbers.
	trimFloor = 64
)

var (
	table [tableSize]slot

	slowMu   sync.Mutex // guards overflow and overflowMark
	overflow = map[int64]*slot{}
	// overflowMark is the overflow's size after its last trim: it is
	// trimmed again once it has doubled, so that its cost is spread over
	// the states added.
	overflowMark int

	reclaims atomic.Int64 // states taken or dropped while idle
	trims    atomic.Int64 // trim passes run
)

// The three lookups. Callers pass the calling goroutine's id (goid.ID),
// except for Find, which any goroutine may call for any id.

// Home returns goroutine id's state if it sits in its home slot, where it
// almost always is, and is busy: the owner may write it until it rests it.
// Otherwise it returns nil. It is small enough to inline: the hot path's
// lookup, with Get as its fallback.
func Home(id int64) *held.G {
	if s := &table[uint64(id)&(tableSize-1)]; s.owner.Load() == id {
		if g := s.g.Load(); g != nil && g.Busy() {
			return g
		}
	}
	return nil
}

// Get returns the state of the calling goroutine, whose id is id, giving
// it one if it has none, and marks it busy. The caller rests it
// (held.G.Rest) at the end of its call if it holds nothing.
func Get(id int64) *held.G {
	s := &table[uint64(id)&(tableSize-1)]
	if s.owner.Load() == id {
		if g := s.g.Load(); g != nil {
			if g.Busy() {
				return g
			}
			// Rested since its last call: the owner's half of the
			// handshake, at home (wake, without the search).
			g.Wake()
			if kept(s, id) && s.g.Load() == g {
				return g
			}
		}
	}
	return get(id)
}

// Find returns goroutine id's state, or nil; it never gives one. Only
// G.ID and G.Seq may be read from another goroutine's state. The calling
// goroutine may read its own, busy or not, but not write it (see Get).
func Find(id int64) *held.G {
	if s := findSlot(id); s != nil {
		return s.g.Load()
	}
	return nil
}

// findSlot returns the slot goroutine id owns, or nil.
func findSlot(id int64) *slot {
	i := uint64(id) & (tableSize - 1)
	for p := range uint64(probe) {
		if s := &table[(i+p)&(tableSize-1)]; s.owner.Load() == id {
			return s
		}
	}
	slowMu.Lock()
	s := overflow[id]
	slowMu.Unlock()
	if s != nil && s.owner.Load() == id {
		return s
	}
	return nil
}

func get(id int64) *held.G {
	for {
		if s := findSlot(id); s != nil {
			if g := wake(s, id); g != nil {
				return g
			}
			continue // taken meanwhile: look again
		}
		if g := claim(id); g != nil {
			return g
		}
		return addOverflow(id)
	}
}

// wake is the owner's half of the handshake, on slot s, which goroutine
// id owned a moment ago: it returns its state, busy, or nil if the slot
// was taken. A state a trim dropped is revived with its creation number.
func wake(s *slot, id int64) *held.G {
	g := s.g.Load()
	if g == nil {
		g = held.Revive(id, s.seq.Load())
		if !s.g.CompareAndSwap(nil, g) {
			return nil
		}
	} else {
		g.Wake()
	}
	// A trimmer that decided meanwhile dropped g before giving the slot
	// back: then g is no longer the slot's.
	if kept(s, id) && s.g.Load() == g {
		return g
	}
	return nil
}

// kept reports whether goroutine id still owns s, waiting out a reclaimer
// that is deciding.
func kept(s *slot, id int64) bool {
	for {
		switch s.owner.Load() {
		case id:
			return true
		case -id:
			runtime.Gosched()
		default:
			return false
		}
	}
}

// claim gives goroutine id a slot in its probe window, free or idle, and
// returns its new state, or nil if every slot there is busy.
func claim(id int64) *held.G {
	i := uint64(id) & (tableSize - 1)
	for p := range uint64(probe) {
		s := &table[(i+p)&(tableSize-1)]
		if s.owner.Load() != 0 || !s.owner.CompareAndSwap(0, id) {
			continue
		}
		// A reclaimer may see the slot ours with no state yet, as after a
		// trim, and take it: the state goes in as a revived one would.
		g := held.New(id)
		if s.g.CompareAndSwap(nil, g) && kept(s, id) && s.g.Load() == g {
			return g
		}
	}
	for p := range uint64(probe) {
		s := &table[(i+p)&(tableSize-1)]
		o, g := s.owner.Load(), s.g.Load()
		if o <= 0 || g != nil && g.Busy() {
			continue
		}
		if take(s, o, g) {
			// A new state: the previous owner's is never written again by
			// anyone but itself, and it will find it gone.
			g := held.New(id)
			s.g.Store(g)
			s.owner.Store(id)
			reclaims.Add(1)
			return g
		}
	}
	return nil
}

// take is the reclaimer's half of the handshake: it takes slot s from
// goroutine o, whose state was seen to be g (nil after a trim) and idle.
// If it reports true the caller holds s (its owner word is -o) and must
// store the slot's new owner; otherwise s is as it was.
func take(s *slot, o int64, g *held.G) bool {
	if !s.owner.CompareAndSwap(o, -o) {
		return false
	}
	if s.g.Load() != g || g != nil && g.Busy() {
		s.owner.Store(o)
		return false
	}
	return true
}

// addOverflow gives goroutine id a state in the overflow map, trimming
// the map of idle states first once it has doubled since its last trim.
func addOverflow(id int64) *held.G {
	g := held.New(id)
	s := &slot{}
	s.owner.Store(id)
	s.g.Store(g)
	slowMu.Lock()
	defer slowMu.Unlock()
	if len(overflow) >= max(2*overflowMark, probe) {
		trimOverflow()
	}
	overflow[id] = s
	return g
}

// trimOverflow drops the overflow's idle states. slowMu is held.
func trimOverflow() {
	for o, s := range overflow {
		if g := s.g.Load(); g != nil && !g.Busy() && take(s, o, g) {
			delete(overflow, o)
			s.owner.Store(0) // its owner, if alive, looks again
			reclaims.Add(1)
		}
	}
	overflowMark = len(overflow)
}

// Trim drops the states that are idle, their owners alive or not: the
// table's, once it keeps more than a few, and the overflow's. A dropped
// table state keeps its creation number for its owner (held.Revive). It
// runs after every garbage collection, so that the memory of goroutines
// gone is given back; tests call it directly. Its cost is the table's
// size, whatever the number of goroutines, and it stops no one.
func Trim() {
	n := 0
	for i := range table {
		if table[i].owner.Load() > 0 && table[i].g.Load() != nil {
			n++
		}
	}
	if n > trimFloor {
		for i := range table {
			s := &table[i]
			o, g := s.owner.Load(), s.g.Load()
			if o <= 0 || g == nil || g.Busy() || !take(s, o, g) {
				continue
			}
			s.seq.Store(g.Seq())
			s.g.Store(nil)
			s.owner.Store(o)
			reclaims.Add(1)
		}
	}
	slowMu.Lock()
	trimOverflow()
	slowMu.Unlock()
	trims.Add(1)
}

// trimAfterGC runs Trim after each garbage collection, from a cleanup of
// an object dropped at once, which then arranges the next.
func trimAfterGC() {
	runtime.AddCleanup(new(gcTick), func(struct{}) {
		Trim()
		trimAfterGC()
	}, struct{}{})
}

// gcTick is what trimAfterGC drops: big enough not to share a block of the
// tiny allocator, whose objects may be freed late.
type gcTick struct{ _ [16]byte }

func init() { trimAfterGC() }

// Stats reports how many goroutine states exist (in the table and in the
// overflow), how many idle ones were reclaimed or dropped, and how many
// trims ran, for tests of boundedness.
func Stats() (states, overflowed int, reclaimed, trimmed int64) {
	for i := range table {
		if table[i].owner.Load() > 0 && table[i].g.Load() != nil {
			states++
		}
	}
	slowMu.Lock()
	overflowed = len(overflow)
	slowMu.Unlock()
	return states + overflowed, overflowed, reclaims.Load(), trims.Load()
}

// States returns the state of every goroutine that has one now.
func States() []*held.G {
	var out []*held.G
	for i := range table {
		s := &table[i]
		if s.owner.Load() > 0 {
			if g := s.g.Load(); g != nil {
				out = append(out, g)
			}
		}
	}
	slowMu.Lock()
	for _, s := range overflow {
		if g := s.g.Load(); g != nil {
			out = append(out, g)
		}
	}
	slowMu.Unlock()
	return out
}
