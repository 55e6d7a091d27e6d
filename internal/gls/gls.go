// Package gls is goroutine-local storage: for each goroutine that asks,
// its own *held.G, found from its id.
//
// Go has no goroutine-local storage, so the states live in a table indexed
// by goroutine id. A goroutine finds its own with a few atomic loads (ids
// are sequential, so its slot is usually the id modulo the table size); it
// claims a slot with a compare-and-swap the first time it asks. No global
// lock is taken on this path, and the cost does not depend on what other
// goroutines do.
//
// Goroutines die without telling anyone, and finding out which have exited
// takes a dump of every goroutine, a stop-the-world as long as there are
// goroutines. So the table never asks. It reclaims idle states instead: a
// state that holds nothing (held.G.Busy is false) may be dropped, whether
// its owner is alive or not, by the handshake below; its slot then goes to
// whichever goroutine needs it, its owner included. The states stay
// bounded by the goroutines that hold locks, plus the table's size.
// Goroutines that find no slot use an overflow map, trimmed the same way.
//
// # The handshake
//
// A slot's owner word holds its goroutine's id; minus it while a
// reclaimer decides whether to drop the state; the id with the dropped
// bit once the state is dropped (the state's creation number kept in the
// slot, for the owner to revive it with); 0 when free.
//
//   - The owner marks its state busy (held.G.Wake), then loads the owner
//     word. If it reads its id, the state is its own until it rests
//     (held.G.Rest); if minus its id, it waits for the reclaimer to decide;
//     otherwise the state was dropped, and it revives it or claims
//     another.
//   - The reclaimer swaps the owner words of the states it saw idle from id
//     to minus id, fences (a process-wide memory barrier), then loads each
//     state's busy mark. If busy, it puts the id back; otherwise it drops
//     the state, storing the id with the dropped bit.
//
// The fence is what lets the owner's mark be a plain store (see
// internal/held's idle.go): whatever the interleaving, either the mark is
// visible to the reclaimer after the fence, and it backs off, or the owner
// ran after the fence and reads the reclaimer's swap. A dropped state is
// never put back, and only its owner gives the slot its id again, so an
// owner that reads its id twice around its mark has the slot's current
// state. One fence serves a whole batch. On Linux it is the kernel's
// expedited barrier (membarrier), which stops nothing; elsewhere it stops
// the world for a moment, at a cost that depends on the number of
// processors and not of goroutines (see fence.go).
//
// # Why a lost state only hides reports
//
// (docs/RULES.md R17.) A state is taken only while idle: it holds no lock
// entry and its owner runs no report handler, so no hold is forgotten
// (held-by-exited, a recursive lock and an Unlock of one's own lock still
// see every hold). What an idle state may still carry is evidence waiting
// to be proved: held-back reports (held.Pending) and order edges from read
// holds (held.Wait); losing them loses reports, never makes one. Two
// things it carries hold reports back, and are kept in the slot for the
// owner (held.Remnant, revived with the state): its creation number
// (held.G.Seq), which the initialisation-write rule (lockorder's
// class.Lock.Use and Witness) counts a goroutine by, and the Onces it has
// seen done, for which a Do records no edge. A third makes reports if it
// is lost, and so is never lost while its goroutine lives: its clock
// (docs/RULES.md R21), without which its next release publishes nothing
// and the edges it took before look unordered. A remnant that keeps one
// (held.Remnant.Clocked) stays in the overflow when an overflow state is
// dropped, and is moved there when its table slot goes to another
// goroutine; such remnants are freed by the goroutine dump, once their
// goroutines have exited (dropExited). Where any other remnant is lost
// (the slot went to another goroutine, or the state was in the
// overflow), the goroutine gets a new, higher creation number, so it
// counts as having come later, and a later goroutine is never a witness
// that shows a lock shared (the writer itself, renumbered, is not one
// either); and, if the remnant remembered Onces, its new state is marked
// forgetful (held.G.Forgetful, by a bit per hash of the id, which may
// mark another goroutine too), so that a Do on a done Once records no edge
// at all. A goroutine that needs a slot takes, first, a free one, then one
// whose remnant remembers nothing. No goroutine is ever given
// another's number or memory: a remnant is revived only for its own
// goroutine.
//
// A state that lists only locks other goroutines released for it
// (held.G.Stale) is busy for good once its goroutine exits, and no
// handshake can take it: a live goroutine waiting for its first lock looks
// the same. Such states are freed only once a goroutine dump shows their
// goroutines gone (dropExited), and only when there are as many of them as
// goroutines, so that the dump's cost is spread over them.
package gls

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/held"
)

type slot struct {
	owner atomic.Int64 // see the handshake
	g     atomic.Pointer[held.G]
	// rem is what the state a trim dropped left (g is then nil), for the
	// owner to revive it with (held.Revive).
	rem atomic.Pointer[held.Remnant]
	_   uint64
}

// HomeSlots is the number of home slots: goroutines whose ids are equal
// modulo HomeSlots share one.
const HomeSlots = tableSize

// AllAway is set in the test-only build (tag syncwatch_awayhome) that
// keeps every state away from its home slot.
const AllAway = homeSkip > 0

const (
	tableSize = 1 << 13
	probe     = 8
	// dropped is set in a slot's owner word with the id of the goroutine
	// whose idle state a trim dropped.
	dropped = 1 << 62
	// trimFloor is how many states the table keeps through a trim after a
	// collection without dropping the idle ones: a program with few
	// goroutines never loses their states' creation numbers.
	trimFloor = 64
	// staleFloor is the fewest states holding only stale entries that
	// make dropExited look for their owners.
	staleFloor = 1024
	// keptFloor is the fewest states more than there are goroutines, busy
	// holding locks, that make dropExited look for their owners: that
	// many at least are of goroutines that exited holding a lock.
	keptFloor = 256
	// lostBits is the log2 of the number of bits in lost: a megabit, so
	// that thousands of lost states rarely share a goroutine's bit.
	lostBits = 20
)

var (
	table [tableSize]slot

	trimMu   sync.Mutex // one trim at a time; taken before slowMu
	slowMu   sync.Mutex // guards overflow and overflowMark
	overflow = map[int64]*slot{}
	// overflowMark is the overflow's size after its last trim: it is
	// trimmed again once it has doubled, so that its cost is spread over
	// the states added.
	overflowMark int
	// overflowed is len(overflow), stored under slowMu, loaded without it
	// so that a lookup skips the map while it is empty. A goroutine whose
	// state is in the map put it there itself, so it reads a count that
	// includes it.
	overflowed atomic.Int64

	reclaims atomic.Int64 // idle states dropped
	trims    atomic.Int64 // trim passes run
	fences   atomic.Int64 // fences taken (see fence)
	dumps    atomic.Int64 // goroutine dumps taken (see dropExited)
	// newStates counts the states claim made; madeAtTrim is newStates
	// when the table was last trimmed.
	newStates, madeAtTrim atomic.Int64
	// lost has a bit set for each goroutine (by hash) whose state was
	// dropped with a remnant it will not get back (see lose).
	lost [1 << lostBits / 64]atomic.Uint64
)

// Made, when set (once, at initialization), is called by a goroutine with
// each state it is given, new or revived, before any other goroutine can
// find it: lockorder gives a goroutine started by WaitGroup.Go its group's
// hold and its creation number there, so that such a goroutine has no
// state until it needs one. It must not look up a state itself.
var Made func(g *held.G)

func made(g *held.G) {
	if Made != nil {
		Made(g)
	}
}

// The lookups. Callers pass the calling goroutine's id (goid.ID), except
// for Find, which any goroutine may call for any id.

// Home returns goroutine id's state if it sits in its home slot, where it
// almost always is, and is busy: the owner may write it until it rests it.
// Otherwise it returns nil. It is small enough to inline: a lookup for
// paths that only go on if the goroutine holds something.
func Home(id int64) *held.G {
	if s := &table[uint64(id)&(tableSize-1)]; s.owner.Load() == id {
		if g := s.g.Load(); g != nil && g.Busy() {
			return g
		}
	}
	return nil
}

// Mine returns the calling goroutine's state, busy, if it sits in its home
// slot, or nil: Get's common case, for the Lock paths, with Get as its
// fallback. It is the owner's half of the handshake done at home.
func Mine(id int64) *held.G {
	s := &table[uint64(id)&(tableSize-1)]
	if g := s.g.Load(); g != nil && s.owner.Load() == id {
		if g.Busy() || g.Woken() && s.owner.Load() == id {
			return g
		}
	}
	return nil
}

// Get returns the state of the calling goroutine, whose id is id, giving
// it one if it has none, and marks it busy. The caller rests it
// (held.G.Rest) at the end of its call if it holds nothing.
func Get(id int64) *held.G {
	if g := Mine(id); g != nil {
		return g
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

// Dropped returns the remnant of goroutine id's state, if a trim dropped
// it and it is still id's to revive (Get does), or nil. Called by id.
func Dropped(id int64) *held.Remnant {
	if s := findSlot(id); s != nil && s.owner.Load() == id|dropped {
		return s.rem.Load()
	}
	return nil
}

// Own returns the calling goroutine id's state, or else the remnant of it
// a trim dropped, without giving it one: Find, then Dropped, as one look.
// It waits out a reclaimer deciding on the state, which Find and Dropped
// called one after the other can miss between them (the state taken
// from the slot, the remnant not yet marked), finding neither.
func Own(id int64) (*held.G, *held.Remnant) {
	for {
		s := findSlot(id)
		if s == nil {
			return nil, nil
		}
		switch o := s.owner.Load(); o {
		case id:
			if g := s.g.Load(); g != nil {
				return g, nil
			}
		case id | dropped:
			return nil, s.rem.Load()
		case -id:
			if g := s.g.Load(); g != nil {
				return g, nil // still there: whatever the reclaimer decides
			}
		}
		runtime.Gosched() // being decided, or moved: look again
	}
}

// findSlot returns the slot goroutine id owns, or nil. A slot a
// reclaimer is deciding on, or whose state it dropped, is still id's.
func findSlot(id int64) *slot {
	i := uint64(id) & (tableSize - 1)
	for p := range uint64(probe + homeSkip) {
		if s := &table[(i+p)&(tableSize-1)]; ours(s.owner.Load(), id) {
			return s
		}
	}
	if overflowed.Load() == 0 {
		return nil
	}
	slowMu.Lock()
	s := overflow[id]
	slowMu.Unlock()
	if s != nil && ours(s.owner.Load(), id) {
		return s
	}
	return nil
}

// ours reports whether owner word o is goroutine id's.
func ours(o, id int64) bool { return o == id || o == -id || o == id|dropped }

func get(id int64) *held.G {
	for {
		if s := findSlot(id); s != nil {
			if g := wake(s, id); g != nil {
				return g
			}
			continue // dropped or taken meanwhile: look again
		}
		if g := claim(id); g != nil {
			return g
		}
		// The window is full. If enough states were made since the table
		// was last trimmed, trim it (one fence for that many states) and
		// try again: a program whose goroutines come and go keeps using
		// the table, not the overflow.
		if newStates.Load()-madeAtTrim.Load() >= tableSize/4 && trimMu.TryLock() {
			trim(true, false)
			trimMu.Unlock()
			if g := claim(id); g != nil {
				return g
			}
		}
		return addOverflow(id)
	}
}

// wake is the owner's half of the handshake on slot s, found by findSlot:
// it returns goroutine id's state, busy, or nil if it has to look again. A
// dropped state is revived with its creation number.
func wake(s *slot, id int64) *held.G {
	if s.owner.Load() == id|dropped {
		if !s.owner.CompareAndSwap(id|dropped, id) {
			return nil // taken by another goroutine
		}
		g := held.Revive(id, s.rem.Load())
		made(g)
		s.g.Store(g)
		return g
	}
	g := s.g.Load()
	if g == nil {
		runtime.Gosched() // being dropped: look again
		return nil
	}
	g.Wake()
	if kept(s, id) {
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

// claim gives goroutine id a slot in its probe window, free or holding a
// dropped state, and returns its new state, or nil if there is none. A
// dropped state's owner revives it by a compare-and-swap on the same word,
// so the two cannot both win.
func claim(id int64) *held.G {
	i := uint64(id) & (tableSize - 1)
	// Free slots first, then those whose dropped state's remnant would
	// cost nothing to lose, then any dropped one.
	for pass := range 3 {
		for p := range uint64(probe) {
			s := &table[(i+homeSkip+p)&(tableSize-1)]
			o := s.owner.Load()
			switch {
			case o == 0:
			case o < 0 || o&dropped == 0 || pass == 0:
				continue
			case pass == 1 && s.rem.Load().Remembers():
				continue
			}
			var moved *slot
			if o != 0 {
				if r := s.rem.Load(); r.Clocked() {
					// A clock must not be lost (R17, R21): the remnant
					// moves to the overflow, put there first, so that
					// its goroutine finds it there once the slot is
					// taken, and never finds neither.
					if moved = displace(o &^ dropped); moved == nil {
						continue
					}
				} else {
					// Its remnant goes with the slot: marked lost first,
					// so that its goroutine, finding no slot, is never
					// without the mark (marking it needlessly only holds
					// edges back).
					lose(o&^dropped, r)
				}
			}
			if !s.owner.CompareAndSwap(o, id) {
				if moved != nil {
					unplace(o&^dropped, moved) // its goroutine revived it here
				}
				continue
			}
			if moved != nil {
				// The remnant of the state the owner word named, read
				// now that the slot is ours: the goroutine may have
				// revived and dropped it again since the look above.
				moved.rem.Store(s.rem.Load())
				moved.owner.Store(o)
			}
			g := held.New(id, forgetful(id))
			made(g)
			s.g.Store(g)
			newStates.Add(1)
			return g
		}
	}
	return nil
}

// displace puts in the overflow a slot for the remnant of goroutine id's
// state, which claim is taking from id's table slot, and returns it; nil
// if id has a slot there already. Until claim settles it (it stores the
// remnant and then the owner word id|dropped) the slot's owner word is
// -id, so that id, finding it once its table slot is gone, waits as for a
// reclaimer deciding. A goroutine looks in the table first: while its
// table slot is still its own, it revives the remnant there.
func displace(id int64) *slot {
	s := &slot{}
	s.owner.Store(-id)
	slowMu.Lock()
	defer slowMu.Unlock()
	if overflow[id] != nil {
		return nil
	}
	overflow[id] = s
	overflowed.Store(int64(len(overflow)))
	return s
}

// unplace removes s, which displace put in the overflow for goroutine id
// and no goroutine has used: id revived its remnant in the table.
func unplace(id int64, s *slot) {
	slowMu.Lock()
	defer slowMu.Unlock()
	if overflow[id] == s {
		delete(overflow, id)
		overflowed.Store(int64(len(overflow)))
	}
}

// Release gives up the calling goroutine's state and slot, if it holds
// nothing: for a goroutine that is about to exit, where the library runs
// its last frame (WaitGroup.Go), so that its slot is free at once rather
// than at the next trim. A state that holds something is kept: its holds
// outlive the goroutine.
func Release(id int64) {
	s := findSlot(id)
	if s == nil {
		return
	}
	g := s.g.Load()
	if g == nil || g.Len() != 0 || g.InHandler {
		return
	}
	for {
		switch s.owner.Load() {
		case id:
			// The state first: a reclaimer deciding meanwhile sees it gone
			// and puts the owner word back for this loop to free.
			s.g.Store(nil)
			if !s.owner.CompareAndSwap(id, 0) {
				continue
			}
			slowMu.Lock()
			if overflow[id] == s {
				delete(overflow, id)
				overflowed.Store(int64(len(overflow)))
			}
			slowMu.Unlock()
			return
		case -id:
			runtime.Gosched()
		default:
			return // dropped by a trim: nothing left to give up
		}
	}
}

// candidate is a slot whose state looked idle: owned by o, with state g;
// in the table or the overflow.
type candidate struct {
	s     *slot
	o     int64
	g     *held.G
	table bool
}

// takeIdle is the reclaimer's half of the handshake: it announces a take
// of each candidate (owner word from o to -o), fences, then keeps those
// still idle and puts the others back. The caller holds the slots
// returned (owner word -o) and must store each one's new owner word.
func takeIdle(cs []candidate) []candidate {
	marked := cs[:0]
	for _, c := range cs {
		if c.s.owner.CompareAndSwap(c.o, -c.o) {
			marked = append(marked, c)
		}
	}
	if len(marked) == 0 {
		return nil
	}
	fence()
	taken := marked[:0]
	for _, c := range marked {
		if c.s.g.Load() != c.g || !idle(c.g) {
			c.s.owner.Store(c.o)
			continue
		}
		taken = append(taken, c)
	}
	return taken
}

// idle reports whether state g may be dropped: it holds nothing.
func idle(g *held.G) bool { return !g.Busy() }

// lose records that goroutine id's state was dropped, leaving r, which
// its goroutine will not get back: if r remembers a Once (Forgets), a state made
// later for id may have lost it (held.G.Forgetful). The record is a bit
// per hash of the id, so another goroutine may be told so too: it then
// only holds back an edge it need not have.
func lose(id int64, r *held.Remnant) {
	if !r.Forgets() {
		return
	}
	h := hashID(id)
	lost[h/64].Or(1 << (h % 64))
}

// forgetful reports whether a new state for goroutine id may follow one
// that was lost with what it remembered (see lose).
func forgetful(id int64) bool {
	h := hashID(id)
	return lost[h/64].Load()&(1<<(h%64)) != 0
}

// hashID spreads goroutine ids over the bits of lost.
func hashID(id int64) uint64 { return uint64(id) * 0x9e3779b97f4a7c15 >> (64 - lostBits) }

// addOverflow gives goroutine id a state in the overflow map, trimming
// the map of idle states first once it has doubled since its last trim.
func addOverflow(id int64) *held.G {
	g := held.New(id, forgetful(id))
	made(g)
	s := &slot{}
	s.owner.Store(id)
	s.g.Store(g)
	slowMu.Lock()
	due := len(overflow) >= max(2*overflowMark, probe)
	slowMu.Unlock()
	if due && trimMu.TryLock() {
		trim(false, true)
		trimMu.Unlock()
	}
	slowMu.Lock()
	overflow[id] = s
	overflowed.Store(int64(len(overflow)))
	slowMu.Unlock()
	return g
}

// Trim drops the states that are idle, their owners alive or not: the
// table's, once it keeps more than a few, and the overflow's. A dropped
// table state keeps its creation number for its owner (held.Revive). It
// runs after every garbage collection, so that the memory of goroutines
// gone is given back; tests call it directly. Its cost is the table's
// size plus the overflow's, whatever the number of goroutines, and it
// fences once (see fence).
func Trim() {
	trimMu.Lock()
	defer trimMu.Unlock()
	n := 0
	for i := range table {
		if table[i].owner.Load() > 0 && table[i].g.Load() != nil {
			n++
		}
	}
	trim(n > trimFloor, true)
	dropExited()
	held.PruneGraves()
	trims.Add(1)
}

// dropExited frees the states that hold only locks released for them by
// other goroutines (held.G.Stale), once their goroutines have exited. A
// goroutine that locks, hands the lock off and exits leaves such a state
// busy for good; no handshake can take it, since a live goroutine waiting
// for a lock looks the same. Telling them apart takes a goroutine dump, a
// stop-the-world as long as there are goroutines, so it waits until there
// are as many such states as goroutines (and at least staleFloor): its
// cost is spread over them, and a program that hands off no locks never
// pays it. trimMu is held.
//
// The same dump frees the remnants kept in the overflow for their clocks
// (R21) whose goroutines have exited: each counts as a state to drop.
//
// The same dump frees the states of exited goroutines that still hold a
// lock of their own, busy for good too: their holds are kept, for the
// report that the lock was left held and for R24, as graves (held.Bury),
// which refer to the locks weakly and are at most held.MaxGraves, and
// the order edges waiting on them, for a release that cannot come, are
// dropped. The dump is worth it once the busy states outnumber the
// goroutines by keptFloor or by as many as there are goroutines,
// whichever is more (about twice as many busy states as goroutines, so
// that live goroutines that all hold a lock do not make every trim dump),
// or once the edges waiting on them are many (held.G.Heavy).
// aliveHeavy holds the heavy states the last dump found alive, with how
// many edges waited on each then. trimMu is held.
var aliveHeavy map[*held.G]int

func dropExited() {
	var cs, heavy, busy, gone []candidate
	for i := range table {
		s := &table[i]
		if o, g := s.owner.Load(), s.g.Load(); o > 0 && o&dropped == 0 && g != nil {
			if g.Stale() {
				cs = append(cs, candidate{s, o, g, true})
				continue
			}
			if g.Busy() {
				busy = append(busy, candidate{s, o, g, true})
			}
			if g.Heavy() {
				heavy = append(heavy, candidate{s, o, g, true})
			}
		}
	}
	slowMu.Lock()
	for o, s := range overflow {
		if g := s.g.Load(); g != nil {
			if g.Stale() {
				cs = append(cs, candidate{s, o, g, false})
				continue
			}
			if g.Busy() {
				busy = append(busy, candidate{s, o, g, false})
			}
			if g.Heavy() {
				heavy = append(heavy, candidate{s, o, g, false})
			}
		} else if s.owner.Load() == o|dropped {
			gone = append(gone, candidate{s, o, nil, false})
		}
	}
	slowMu.Unlock()
	// A heavy state counts for its edges, 16 to a state: the dump is
	// worth it once the states to drop, or the edges to forget, are
	// many for the goroutines it stops.
	weight := len(cs) + len(gone)
	for _, c := range heavy {
		// A state a dump found alive counts again only once its edges
		// have doubled: a goroutine that keeps locks and lives on must
		// not make every trim dump.
		if n := c.g.HeavyEdges(); n >= 2*aliveHeavy[c.g] {
			weight += n / 16
		}
	}
	// A goroutine holds at most one state: the busy states past the
	// goroutines are of goroutines that exited holding a lock.
	ng := runtime.NumGoroutine()
	if weight < max(staleFloor, ng) && len(busy)-ng < max(keptFloor, ng) {
		return
	}
	// Candidates listed before the dump: a goroutine that exits after it
	// is listed is not dropped this time, and one that claimed a slot
	// after the listing is not a candidate.
	live := liveGoroutines()
	dumps.Add(1)
	clear(aliveHeavy)
	for _, c := range heavy {
		if live[c.o] || c.s.g.Load() != c.g {
			if aliveHeavy == nil {
				aliveHeavy = make(map[*held.G]int)
			}
			aliveHeavy[c.g] = c.g.HeavyEdges()
		}
	}
	// Exited, and so written for good before the dump: their holds are
	// buried before the states are freed, so that the exit check, which
	// reads the states first and the graves after, misses none.
	var dead []candidate
	var deadGs []*held.G
	for _, c := range busy {
		if !live[c.o] && c.s.g.Load() == c.g {
			dead = append(dead, c)
			deadGs = append(deadGs, c.g)
		}
	}
	held.Bury(deadGs)
	slowMu.Lock()
	defer slowMu.Unlock()
	for _, c := range dead {
		c.free()
	}
	for _, c := range cs {
		// Exited, and so written for good before the dump: its stack reads
		// true now.
		if live[c.o] || c.s.g.Load() != c.g || !c.g.Stale() {
			continue
		}
		c.free()
	}
	for _, c := range gone {
		// An exited goroutine never revives its remnant; a live one may
		// have, since the listing (the owner word is then its id).
		if !live[c.o] && overflow[c.o] == c.s && c.s.owner.CompareAndSwap(c.o|dropped, 0) {
			delete(overflow, c.o)
		}
	}
	overflowed.Store(int64(len(overflow)))
}

// free frees c's state, whose goroutine has exited. slowMu is held.
func (c candidate) free() {
	if c.table {
		c.s.g.Store(nil)
		if !c.s.owner.CompareAndSwap(c.o, 0) {
			c.s.g.Store(c.g)
			return
		}
	} else if overflow[c.o] == c.s {
		delete(overflow, c.o)
	}
	reclaims.Add(1)
}

// trim drops the idle states of the table and of the overflow, as asked,
// with one fence. trimMu is held; slowMu is not (the fence is not taken
// under it).
func trim(inTable, inOverflow bool) {
	var cs []candidate
	before := 0 // the overflow's size when its candidates were listed
	if inTable {
		madeAtTrim.Store(newStates.Load())
		for i := range table {
			s := &table[i]
			o, g := s.owner.Load(), s.g.Load()
			if o > 0 && o&dropped == 0 && g != nil && idle(g) {
				cs = append(cs, candidate{s, o, g, true})
			}
		}
	}
	if inOverflow {
		slowMu.Lock()
		before = len(overflow)
		for o, s := range overflow {
			if g := s.g.Load(); g != nil && idle(g) {
				cs = append(cs, candidate{s, o, g, false})
			}
		}
		slowMu.Unlock()
	}
	taken := takeIdle(cs)
	slowMu.Lock()
	defer slowMu.Unlock()
	kept := before
	for _, c := range taken {
		if c.table {
			c.s.rem.Store(c.g.Remnant())
			c.s.g.Store(nil)
			c.s.owner.Store(c.o | dropped)
		} else if r := c.g.Remnant(); r.Clocked() {
			// A clock is never lost (R17, R21): the remnant stays for
			// its goroutine, as in the table, until a dump shows the
			// goroutine gone (dropExited).
			c.s.rem.Store(r)
			c.s.g.Store(nil)
			c.s.owner.Store(c.o | dropped)
		} else {
			if overflow[c.o] == c.s {
				delete(overflow, c.o)
				kept--
			}
			lose(c.o, r)
			c.s.owner.Store(0) // its owner, if alive, looks again
		}
		reclaims.Add(1)
	}
	overflowed.Store(int64(len(overflow)))
	if inOverflow {
		// What the trim kept, not what was added meanwhile: the next trim
		// comes when the overflow has doubled from that.
		overflowMark = kept
	}
}

// trimAfterGC runs Trim after each garbage collection, from a cleanup of
// an object dropped at once, which then arranges the next.
func trimAfterGC() {
	runtime.AddCleanup(new(gcTick), func(struct{}) {
		startMembarrier()
		held.Collected()
		Trim()
		trimAfterGC()
	}, struct{}{})
}

// gcTick is what trimAfterGC drops: big enough not to share a block of the
// tiny allocator, whose objects may be freed late.
type gcTick struct{ _ [16]byte }

func init() { trimAfterGC() }

// Stats reports how many goroutine states exist (in the table and in the
// overflow; not the remnants the overflow keeps, see Remnants), how many
// idle ones were dropped, and how many trims ran, for tests of
// boundedness.
func Stats() (states, overflowN int, reclaimed, trimmed int64) {
	for i := range table {
		if table[i].owner.Load() > 0 && table[i].g.Load() != nil {
			states++
		}
	}
	slowMu.Lock()
	overflowed := 0
	for _, s := range overflow {
		if s.g.Load() != nil {
			overflowed++ // not a remnant kept for its clock
		}
	}
	slowMu.Unlock()
	return states + overflowed, overflowed, reclaims.Load(), trims.Load()
}

// Remnants reports how many remnants of dropped states the overflow keeps
// for their clocks (R21), for tests of boundedness.
func Remnants() int {
	slowMu.Lock()
	defer slowMu.Unlock()
	n := 0
	for _, s := range overflow {
		if s.g.Load() == nil {
			n++
		}
	}
	return n
}

// Fences reports how many fences reclaimers took (see fence).
func Fences() int64 { return fences.Load() }

// Dumps reports how many goroutine dumps dropExited took.
func Dumps() int64 { return dumps.Load() }

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
