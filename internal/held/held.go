// Package held keeps, for every goroutine, the stack of locks it holds.
//
// Go has no goroutine-local storage, so the stacks live in a table indexed
// by goroutine id. A goroutine finds its own entry with one atomic load (ids
// are sequential, so the slot is usually the id modulo the table size); it
// claims a slot with one compare-and-swap the first time it takes a lock, and
// keeps it. No global lock is taken on this path, and the cost does not
// depend on what other goroutines hold.
//
// Goroutines die without telling anyone. When the table fills up, a sweep
// lists the live goroutines (runtime.Stack) and frees the slots of dead ones,
// so the table stays bounded by the number of live goroutines that lock.
// Goroutines that find no slot use a small overflow map.
package held

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
)

// Entry is one held lock.
type Entry struct {
	Lock *class.Lock
	// Elem is the lock's element in the chain key.
	Elem uint64
	// Chain is the key of the held sequence up to and including this entry.
	Chain chain.Key
	// Gen is Lock.ReadGen() when a read hold was taken.
	Gen  uint32
	Read bool
	Try  bool
	// Again is set when the goroutine already held Lock when it asked for
	// it (a recursive acquisition).
	Again bool
	// Note is a token the owner registered for this hold elsewhere (in
	// lockorder's held-locks profile), 0 if none. DropNote is called with
	// it when the entry leaves the stack, however it leaves.
	Note uint64
}

// DropNote, when set (once, at initialization), is called with the Note of
// every entry that leaves a stack.
var DropNote func(note uint64)

func dropNotes(es []Entry) {
	for i := range es {
		if es[i].Note != 0 && DropNote != nil {
			DropNote(es[i].Note)
		}
	}
}

// G is one goroutine's state. Its stack is only touched by the goroutine
// itself; ID is readable by anyone.
type G struct {
	// InHandler is set by the owner while it runs a report handler, so
	// that a violation caused by the handler itself is not handed back to
	// it (which would deadlock a handler that holds a lock).
	InHandler bool

	id     atomic.Int64
	tag    uint32
	stack  []Entry
	inline [8]Entry

	// Keep two goroutines' states off one cache line: each is written
	// by its owner on every lock.
	_ [64]byte
}

// Retag drops every entry if tag differs from the one the entries were
// recorded under. Callers pass a value that changes when their
// bookkeeping rules change (lockorder's mode), so that entries from before
// the change are not trusted.
func (g *G) Retag(tag uint32) {
	if g.tag != tag {
		g.retag(tag)
	}
}

func (g *G) retag(tag uint32) {
	dropNotes(g.stack)
	clear(g.stack)
	g.stack = g.stack[:0]
	g.tag = tag
}

// Tag returns the tag set by Retag.
func (g *G) Tag() uint32 { return g.tag }

// ID returns the goroutine id that owns g.
func (g *G) ID() int64 { return g.id.Load() }

// Len returns the number of held entries.
func (g *G) Len() int { return len(g.stack) }

// Entries returns the held entries, oldest first. The slice is valid until
// the next Push or Remove.
func (g *G) Entries() []Entry { return g.stack }

// Top returns the most recent entry. g must not be empty.
func (g *G) Top() *Entry { return &g.stack[len(g.stack)-1] }

// Push appends e.
//
// It copies e field by field into its slot rather than appending the
// struct, whose wide copy reads back the narrow stores that built e while
// they are still in flight. Measured side by side on the bench machine, the
// append cost about 6 ns more per uncontended ModeCheck Lock/Unlock pair
// (45 against 51 ns) and 12 ns more per nested pair.
func (g *G) Push(e Entry) {
	n := len(g.stack)
	if n == cap(g.stack) {
		g.grow()
	}
	g.stack = g.stack[:n+1]
	s := &g.stack[n]
	s.Lock, s.Elem, s.Chain, s.Gen = e.Lock, e.Elem, e.Chain, e.Gen
	s.Read, s.Try, s.Again, s.Note = e.Read, e.Try, e.Again, e.Note
}

// grow makes room for one more entry.
func (g *G) grow() {
	g.stack = append(g.stack, Entry{})[:len(g.stack)]
}

// Pop removes the most recent entry.
func (g *G) Pop() {
	dropNotes(g.stack[len(g.stack)-1:])
	g.PopUnnoted()
}

// PopUnnoted removes the most recent entry, which must carry no Note. It
// is Pop for the hot path: small enough to inline.
func (g *G) PopUnnoted() {
	n := len(g.stack) - 1
	g.stack[n].Lock = nil // the only pointer: let the lock be collected
	g.stack = g.stack[:n]
}

// Remove deletes entry i and recomputes the chain keys above it.
func (g *G) Remove(i int) {
	dropNotes(g.stack[i : i+1])
	copy(g.stack[i:], g.stack[i+1:])
	g.stack[len(g.stack)-1] = Entry{}
	g.stack = g.stack[:len(g.stack)-1]
	g.rekey(i)
}

// Find returns the index of the newest entry for l, or -1.
func (g *G) Find(l *class.Lock) int {
	for i := len(g.stack) - 1; i >= 0; i-- {
		if g.stack[i].Lock == l {
			return i
		}
	}
	return -1
}

// Valid reports whether entry e still describes a hold by this goroutine:
// a lock released by another goroutine is no longer held by the one that
// took it.
func (g *G) Valid(e *Entry) bool {
	if e.Read {
		return e.Lock.ReadGen() == e.Gen
	}
	return e.Lock.Holder() == g.ID()
}

// Prune drops entries that are no longer valid. It reports whether any was
// dropped.
func (g *G) Prune() bool {
	kept := g.stack[:0]
	for i := range g.stack {
		if g.Valid(&g.stack[i]) {
			kept = append(kept, g.stack[i])
		} else {
			dropNotes(g.stack[i : i+1])
		}
	}
	if len(kept) == len(g.stack) {
		return false
	}
	for i := len(kept); i < len(g.stack); i++ {
		g.stack[i] = Entry{}
	}
	g.stack = kept
	g.rekey(0)
	return true
}

func (g *G) rekey(from int) {
	var k chain.Key
	if from > 0 {
		k = g.stack[from-1].Chain
	}
	for i := from; i < len(g.stack); i++ {
		k = chain.Extend(k, g.stack[i].Elem)
		g.stack[i].Chain = k
	}
}

// reset prepares g for a new owner.
func (g *G) reset(id int64) {
	clear(g.inline[:])
	g.stack = g.inline[:0]
	g.tag = 0
	g.InHandler = false
	g.id.Store(id)
}

type slot struct {
	owner atomic.Int64
	g     atomic.Pointer[G]
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
	overflow   = map[int64]*G{}
	lastSweep  int64 // claimed count after the last sweep
	sweepCount atomic.Int64
)

// Current returns the calling goroutine's state, claiming a slot for it if
// it has none.
func Current() *G {
	id := goid.ID()
	if s := &table[uint64(id)&(tableSize-1)]; s.owner.Load() == id {
		return s.g.Load()
	}
	return current(id)
}

// Slot returns goroutine id's state if it sits in its home slot, where it
// almost always is, or nil. It is small enough to inline, for callers that
// already know the calling goroutine's id: Current and Mine cost a call
// more.
func Slot(id int64) *G {
	if s := &table[uint64(id)&(tableSize-1)]; s.owner.Load() == id {
		return s.g.Load()
	}
	return nil
}

// CurrentOf is Current for the calling goroutine, whose id is id.
func CurrentOf(id int64) *G { return current(id) }

// Mine returns the calling goroutine's state, or nil if it has none. It
// never claims a slot.
func Mine() *G {
	id := goid.ID()
	if s := &table[uint64(id)&(tableSize-1)]; s.owner.Load() == id {
		return s.g.Load()
	}
	return Lookup(id)
}

// Lookup returns goroutine id's state, or nil. Only G.ID may be read
// from another goroutine's state.
func Lookup(id int64) *G {
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

func current(id int64) *G {
	if g := Lookup(id); g != nil {
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
		g = new(G)
		g.reset(id)
		overflow[id] = g
	}
	return g
}

func claim(id int64) *G {
	i := uint64(id) & (tableSize - 1)
	for p := uint64(0); p < probe; p++ {
		s := &table[(i+p)&(tableSize-1)]
		if s.owner.Load() != 0 || !s.owner.CompareAndSwap(0, id) {
			continue
		}
		// A fresh state each time: the previous owner's is never touched
		// again, since nothing orders its last writes (it just exited)
		// before ours.
		g := new(G)
		g.reset(id)
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
