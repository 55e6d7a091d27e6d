// Package held is a goroutine's stack of held locks: the entries pushed as
// it takes locks and popped as it releases them, with the chain key of
// each prefix, and whether each is still the goroutine's own. A G also
// keeps what waits for the goroutine to prove a read hold its own
// (docs/RULES.md R12): held-back reports (proofs, proofs.go) and order
// edges (waits, waiting.go).
//
// A G is touched only by the goroutine it belongs to, which finds it
// through internal/gls (goroutine-local storage); others may read its ID.
package held

import (
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/hb"
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
	// Init is set on the lock's initialisation write (class.Init), by
	// MarkInit: its release ends the exemption (class.Lock.EndInit).
	Init bool
	// Note is a token the owner registered for this hold elsewhere (in
	// lockorder's held-locks profile), 0 if none. DropNote is called with
	// it when the entry leaves the stack, however it leaves. It is initNote
	// on an entry marked Init that has no token.
	Note uint64
}

// unseenWrite marks, in Gen (which a write hold does not use), a write
// hold taken deeper than lockorder's bound (docs/RULES.md R25): its write
// was not seen, and does not count as one of its class.
const unseenWrite = ^uint32(0)

// MarkUnseen marks e, a write hold, as taken too deep for its write to
// be seen (R25).
func (e *Entry) MarkUnseen() {
	if !e.Read {
		e.Gen = unseenWrite
	}
}

// Unseen reports whether e is a write hold MarkUnseen marked.
func (e *Entry) Unseen() bool { return !e.Read && e.Gen == unseenWrite }

// DropNote, when set (once, at initialization), is called with the Note of
// every entry that leaves a stack (but initNote).
var DropNote func(note uint64)

// initNote is the Note MarkInit gives an entry: not zero, so that its
// release, like a noted one's, takes the way that looks at the entry
// (lockorder's releaseDeep, which ends the initialisation write), and the
// common release, which pops a plain entry, need not test Init.
const initNote = ^uint64(0)

// proveNote is the Note MarkProving gives an entry that has none: edges
// from the hold wait for its release (docs/RULES.md R23), which must take
// the way that looks at the entry. Like initNote it is no token.
const proveNote = initNote - 1

// token reports whether n is a token registered elsewhere.
func token(n uint64) bool { return n != 0 && n != initNote && n != proveNote }

func dropNotes(es []Entry) {
	for i := range es {
		if n := es[i].Note; token(n) && DropNote != nil {
			DropNote(n)
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
	// Inits is set by MarkInit, and cleared by the owner once none of
	// its entries has Init: a nested acquisition looks for them only then.
	Inits bool

	id atomic.Int64
	// busy is set while the owner may write g: see Busy. Loaded with
	// sync/atomic; stored by the owner as idle.go says.
	busy uint32
	tag  uint32
	// Handoffs is, for the owner's use, what a global count of write
	// holds released by other goroutines than their holders (lockorder's
	// handoffs) was when the owner last dropped its entries no longer
	// valid (Prune): while the count stays so, none can have become
	// invalid since. It sits in tag's padding.
	Handoffs uint32
	seq      uint64 // see Seq
	stack    []Entry
	inline   [4]Entry
	// proofs are reports held back until the goroutine proves that the
	// read holds they rest on are its own (R12).
	proofs
	// waits are order edges from read holds, held back until the
	// goroutine proves the holds its own (R12).
	waits
	// proving are order edges from write holds that another goroutine
	// may release, held back until the goroutine releases them itself
	// (R23).
	proving
	// passed are the Onces the goroutine has seen done; see PassOnce.
	passed passedOnces
	// forgetful: see Forgetful.
	forgetful bool
	// HB is the goroutine's clock (docs/RULES.md R21), made when first
	// needed; Inherit is what it starts knowing, from the goroutine that
	// started this one. Only the owner touches them.
	HB      *hb.G
	Inherit *hb.Clock

	// Keep two goroutines' states off one cache line: each is written
	// by its owner on every lock.
	_ [64]byte
}

// dropped is set once a retag dropped a goroutine's holds (Dropped).
var dropped atomic.Bool

// Dropped reports whether a retag ever dropped the holds of a goroutine
// that still had some: the locks it holds since, and what it takes under
// them, are unseen.
func Dropped() bool { return dropped.Load() }

// ForgetDropped clears what Dropped reports, for a test that starts
// afresh with no hold of another test's left.
func ForgetDropped() { dropped.Store(false) }

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
	if len(g.stack) > 0 && !dropped.Load() {
		dropped.Store(true)
	}
	dropNotes(g.stack)
	clear(g.stack)
	g.stack = g.stack[:0]
	g.proofs, g.waits, g.proving = proofs{}, waits{}, proving{owner: g}
	g.tag = tag
}

// Busy reports whether g's owner may be writing it: it holds something, or
// is between a lookup that woke g (Wake) and the end of its call (Rest).
// An idle state (not Busy) holds nothing the engine must keep: internal/gls
// may hand its slot to another goroutine, the owner's writes to it after
// that being lost (see the handshake in internal/gls).
func (g *G) Busy() bool { return atomic.LoadUint32(&g.busy) != 0 }

// Wake marks g busy. Only internal/gls calls it, for the owner, before it
// re-checks that g is still the owner's (the owner's half of the
// handshake; see idle.go for why the store need not be atomic).
func (g *G) Wake() { busyMark(&g.busy) }

// Woken is Wake, reporting true, for use in a condition.
func (g *G) Woken() bool {
	busyMark(&g.busy)
	return true
}

// Rest marks g idle if it holds nothing and its owner runs no handler. The
// owner calls it at the end of a call that may have emptied g, never in
// the middle of one that may push onto g later: a push onto a state marked
// idle may be lost. A state left busy is only kept longer.
func (g *G) Rest() {
	if len(g.stack) == 0 && !g.InHandler {
		idle(&g.busy)
	}
}

// Tag returns the tag set by Retag.
func (g *G) Tag() uint32 { return g.tag }

// ID returns the goroutine id that owns g.
func (g *G) ID() int64 { return g.id.Load() }

// Seq returns g's creation number: states are numbered from 1 as New
// creates them, so a state whose Seq is at most Created() at some moment
// existed at that moment. A goroutine's state is created when it first
// needs one (in lockorder, its first check-mode lock) and kept while it
// lives, so Seq orders goroutines by when they first took part.
func (g *G) Seq() uint64 { return g.seq }

// created counts the states New has created.
var created atomic.Uint64

// Created returns how many states have been created so far: the Seq of
// the newest.
func Created() uint64 { return created.Load() }

// Reserve returns a new creation number for a state not made yet, for a
// goroutine that takes part before it needs a state (lockorder's
// WaitGroup.Go): its state, once made, gets it with Renumber.
func Reserve() uint64 { return created.Add(1) }

// Renumber gives g the creation number seq, which Reserve returned before
// g was made. g must not be shared yet (see internal/gls's Made).
func (g *G) Renumber(seq uint64) { g.seq = seq }

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
// they are still in flight: measurably slower per Lock (bench/, cases (a)
// and (b)). It leaves out Init, which MarkInit sets: one more field to
// copy and Push no longer inlines.
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

// PushHold pushes a hold of l, for reading if read, in l's read
// generation gen, with chain element elem and chain key k: it is
// Push(Entry{Lock: l, Read: read, Gen: gen, Elem: elem, Chain: k}) for the
// hot paths. It writes the entry in place, where an Entry built by the
// caller is zeroed with wide stores and read back narrow, a
// store-forwarding stall on every Lock (bench/, cases (a) and (b)).
func (g *G) PushHold(l *class.Lock, read bool, gen uint32, elem uint64, k chain.Key) {
	n := len(g.stack)
	if n == cap(g.stack) {
		g.grow()
	}
	g.stack = g.stack[:n+1]
	s := &g.stack[n]
	s.Lock, s.Elem, s.Chain, s.Gen = l, elem, k, gen
	s.Read, s.Try, s.Again, s.Note = read, false, false, 0
}

// MarkInit marks the entry just pushed, which has no Note yet, as its
// lock's initialisation write (Init, and initNote), and sets Inits.
func (g *G) MarkInit() {
	t := g.Top()
	t.Init, t.Note = true, initNote
	g.Inits = true
}

// MarkProving marks entry i, a write hold that edges wait on or a hold
// that edges wait into (R23), so that its release takes the way that
// looks at the entry: it gets proveNote if it has no Note.
func (g *G) MarkProving(i int) {
	if e := &g.stack[i]; e.Note == 0 {
		e.Note = proveNote
	}
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

// PopUnnoted removes the most recent entry, which must carry no Note but
// initNote. It is Pop for the hot path: small enough to inline.
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

// HoldsValid reports whether g holds the lock whose ID is id, for
// reading or writing, as its own (Valid). It looks at the whole stack.
func (g *G) HoldsValid(id uint64) bool {
	for i := len(g.stack) - 1; i >= 0; i-- {
		if e := &g.stack[i]; e.Lock.ID == id && g.Valid(e) {
			return true
		}
	}
	return false
}

// Prune drops entries that are no longer valid. It reports whether any was
// dropped. A write hold of a lock that edges wait to go into, handed off,
// ends the section that took it (see endHandedOff).
func (g *G) Prune() bool {
	if g.proving.n > 0 {
		g.endHandedOff()
	}
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

// endHandedOff tells proving of the write holds no longer valid, handed
// off to another goroutine to release, whose lock edges wait to go into
// and g holds no more: each ended its section (proving.ReleasedInto). A
// read hold's validity is no evidence: any goroutine's hand-off of a read
// hold of the lock makes every reader's entry stale (R13). Linear in the
// stack: a lock-all of thousands may be handed off whole.
func (g *G) endHandedOff() {
	var valid map[uint64]struct{} // the locks g holds validly, once needed
	for i := range g.stack {
		e := &g.stack[i]
		if e.Read || g.Valid(e) || !g.proving.ProvingInto(e.Lock.ID) {
			continue
		}
		if valid == nil {
			valid = make(map[uint64]struct{})
			for j := range g.stack {
				if f := &g.stack[j]; g.Valid(f) {
					valid[f.Lock.ID] = struct{}{}
				}
			}
		}
		if _, ok := valid[e.Lock.ID]; !ok {
			g.proving.ReleasedInto(e.Lock.ID)
		}
	}
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

// New returns the state of goroutine id, with nothing held, busy (the
// caller is its owner, about to use it), and a new creation number. If
// forgetful, the goroutine may have had a state before that was lost with
// what it remembered (see Forgetful).
func New(id int64, forgetful bool) *G {
	g := Revive(id, &Remnant{seq: created.Add(1)})
	g.forgetful = forgetful
	return g
}

// Remnant is what a state dropped while idle leaves for its goroutine:
// its creation number and the Onces it has seen done.
type Remnant struct {
	seq       uint64
	passed    passedOnces
	forgetful bool
	hb        *hb.G
	inherit   *hb.Clock
}

// Remembers reports whether r holds anything a rule relies on to hold an
// edge back (a Once seen done, the goroutine's clock (R21), or that the
// goroutine is forgetful):
// losing one that does not costs nothing.
func (r *Remnant) Remembers() bool {
	return r != nil && (r.forgetful || r.passed.ids != [len(r.passed.ids)]uint64{} ||
		r.hb != nil || r.inherit != nil)
}

// Forgets reports whether a state made for r's goroutine after r is lost
// must be marked forgetful (held.G.Forgetful): r remembered a Once seen
// done, or was forgetful itself. A clock (R21) alone does not count: the
// new state's clock, made afresh, knows nothing, which orders nothing,
// while a forgetful goroutine records no edge for a Do on a done Once.
func (r *Remnant) Forgets() bool {
	return r != nil && (r.forgetful || r.passed.ids != [len(r.passed.ids)]uint64{})
}

// Clocked reports whether r keeps a goroutine clock or what the goroutine
// inherited (R21): a release by its goroutine has something to publish.
func (r *Remnant) Clocked() bool { return r != nil && (r.hb != nil || r.inherit != nil) }

// Remnant returns what g leaves if it is dropped. The reclaimer calls it
// once it has taken g (internal/gls): g is idle, or holds only entries
// that are no longer its own (Stale), and its owner, if alive, writes
// nothing that matters to it.
//
//go:norace
func (g *G) Remnant() *Remnant {
	return &Remnant{seq: g.seq, passed: g.passed, forgetful: g.forgetful, hb: g.HB, inherit: g.Inherit}
}

// Revive is New for a goroutine whose state was dropped while idle: it
// keeps the creation number that goroutine's state had (its Seq), so that
// the goroutine still counts as having existed since then, and the Onces
// it had seen done. r must be the Remnant of the same goroutine's state.
func Revive(id int64, r *Remnant) *G {
	g := new(G)
	g.stack = g.inline[:0]
	g.id.Store(id)
	g.seq = r.seq
	g.passed = r.passed
	g.forgetful = r.forgetful
	g.HB, g.Inherit = r.hb, r.inherit
	g.busy = 1 // before g is shared
	g.proving.owner = g
	return g
}

// Forgetful reports whether the goroutine may have lost what an earlier
// state of its remembered (internal/gls drops idle states, and not every
// drop leaves a Remnant its goroutine gets back): a rule that relies on
// that memory to hold back an edge must then hold it back anyway.
func (g *G) Forgetful() bool { return g.forgetful }

// Stale reports whether g holds something, but only entries that are not
// its own now (Valid is false for each): locks another goroutine released
// for it, or a lock it is still waiting for. A goroutine that hands off
// every lock it holds and exits leaves such a state, busy for good; a live
// one may look so too, so the answer is only a hint (internal/gls drops
// such a state only once a goroutine dump shows its owner gone). Any
// goroutine may call it; it reads g's stack without synchronisation, so
// the answer may be wrong while the owner is changing it, and it only
// looks at a stack that fits in g's inline entries (so that what it reads
// is always g's memory).
//
//go:norace
func (g *G) Stale() bool {
	raceOff()
	defer raceOn()
	n := len(g.stack)
	if n == 0 || n > len(g.inline) || unsafe.SliceData(g.stack) != &g.inline[0] {
		return false
	}
	for i := range n {
		e := g.inline[i]
		if e.Lock == nil || g.Valid(&e) {
			return false
		}
	}
	return true
}
