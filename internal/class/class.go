// Package class gives locks their identity: a class shared by every lock
// created under one name, a unique id per lock instance, and the instance's
// current holder. A named class is freed when its last lock is, unless the
// lock-order graph keeps it (see NewNamed and Keep).
//
// Ids come from one counter and are never reused, so a dead lock's id can
// never be confused with a new one, whatever address the new one has.
package class

import (
	"fmt"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/kind"
)

var nextID atomic.Uint64

// newID returns a fresh id, never returned before.
func newID() uint64 { return nextID.Add(1) }

// Class is a set of locks that share ordering rules, as lockdep's lock
// classes do: an order seen between two members of classes A and B is
// assumed for every member.
type Class struct {
	ID   uint64
	Name string
	// Named is set for classes created by name (NewMutex("store")); an
	// anonymous class belongs to a single zero-value lock.
	Named bool
	// writes is what is known of the class's write acquisitions: the
	// writeSeen and writeGated bits.
	writes atomic.Uint32
	seq    atomic.Uint64 // instances numbered so far, for names
	reg    registration  // a named class's place in the registry
	// held is set once a lock of a kind whose holds are not taken by
	// locking (a WaitGroup, held by its Go'd functions) is first held.
	held atomic.Bool
}

// MarkHeld records that a lock of the class is held for the first time,
// for a kind whose holds do not come from locking it (a WaitGroup.Go).
func (c *Class) MarkHeld() {
	if !c.held.Load() {
		c.held.Store(true)
	}
}

// Held reports whether MarkHeld was called: until then, no order edge can
// start at a lock of such a class (RULES.md R22).
func (c *Class) Held() bool { return c.held.Load() }

// The bits of Class.writes.
const (
	// writeSeen: some lock of the class was acquired for writing.
	writeSeen = 1 << iota
	// writeGated: every blocking write acquisition of the class so far was
	// made holding some other lock for writing (lockorder keeps which: the
	// class's writers' gate).
	writeGated
)

// Written reports whether some lock of the class was ever acquired for
// writing. A read acquisition can only block on a class that has writers.
func (c *Class) Written() bool { return c.writes.Load()&writeSeen != 0 }

// Settled reports whether a write acquisition of the class made with
// nothing else held has nothing to record: the class has writers already,
// and no writers' gate that such a write would open. It is the one load
// the fast path of a Lock with nothing held makes.
func (c *Class) Settled() bool { return c.writes.Load() == writeSeen }

// Gated reports whether every blocking write acquisition of the class so
// far was made holding some other lock for writing.
func (c *Class) Gated() bool { return c.writes.Load()&writeGated != 0 }

// MarkWritten records the first write acquisition, made holding some other
// lock for writing if gated. It reports whether it was the first; if not,
// it changes nothing.
func (c *Class) MarkWritten(gated bool) bool {
	v := uint32(writeSeen)
	if gated {
		v |= writeGated
	}
	return c.writes.CompareAndSwap(0, v)
}

// Unwrite forgets the class's write acquisitions, and with them its
// writers' gate: the next write acquisition is the first again, and until
// then a read acquisition counts as one that cannot block. lockorder calls
// it when it forgets what it learnt (Reset).
func (c *Class) Unwrite() { c.writes.Store(0) }

// Ungate records that a write acquisition was made without any lock of the
// writers' gate held: the class's writes have no gate any more.
func (c *Class) Ungate() { c.writes.And(^uint32(writeGated)) }

// Lock is the identity of one lock instance.
type Lock struct {
	ID    uint64
	Class *Class
	// Kind is the sort of primitive the lock is: what its holds
	// guarantee, and its type's name.
	Kind kind.Kind
	// seq numbers the instances of a named class, or of a Site, for names
	// ("store#2").
	seq uint64
	// Site is where a lock of an anonymous class was first used, when
	// known; nil for named classes.
	Site *Site

	// chainKeys cache the lock's chain-cache element and one-lock chain
	// key, so that taking a lock with nothing held computes nothing.
	chainKeys
	addr        uintptr
	live        *liveness // a named class's token, shared by its live locks
	tracked     atomic.Bool
	waitCounter // the lock's short waits, for lockorder's wait profile
	// firstWrite is what is known of the lock's first write (R11). It
	// is read-mostly, and read on every acquisition: it lives here.
	firstWrite

	// The fields above are read on every Lock; holder is written whenever
	// the lock changes hands. Keep them on different cache lines so that a
	// contended lock does not make every reader of its identity miss: the
	// fields above fill the first two lines (120 bytes on a 64-bit
	// platform), the written ones start the third. With the padding at
	// the end, a Lock fills the 192-byte size class exactly, whose objects
	// start on a line, so these offsets fall on the same lines in every
	// Lock (TestLockLayout).
	_ [8]byte

	holder         atomic.Int64  // goroutine that last acquired it for writing; 0 after a release by another goroutine
	note           atomic.Uint64 // the held-profile token of the current write hold, 0 if none
	moves          atomic.Uint64 // changes of holder, so a watcher can tell a lock that changes hands from one that does not
	readGeneration               // bumped when a read hold is released by a goroutine that does not hold it (R13)
	first          atomic.Uint32 // where the lock was first acquired in check mode: a stack id (internal/stack), 0 if unknown
	Gate           gate          // what R24 knows of the lock as a gate (gate.go)
	_              [28]byte
}

// New returns the identity of a new lock of kind k: in a class of its own,
// named after its address, when c is nil (NewAt names it after a site),
// else in c, which must be the class of a live lock (as for a copy of
// that lock; NewNamed finds a class by name). addr is the lock's address,
// used in its name. A k that is none of kind's constants panics.
func New(c *Class, k kind.Kind, addr uintptr) *Lock {
	mustKind(k)
	if c == nil {
		return newLock(&Class{ID: newID()}, nil, k, addr)
	}
	var t *liveness
	if c.Named {
		namedMu.Lock()
		t = join(c)
		namedMu.Unlock()
	}
	return newLock(c, t, k, addr)
}

// newLock returns a new lock of c, of kind k, holding t, the token of c's
// live locks if c is named.
func newLock(c *Class, t *liveness, k kind.Kind, addr uintptr) *Lock {
	l := &Lock{ID: newID(), Class: c, Kind: k, addr: addr, live: t}
	if c.Named {
		l.seq = c.seq.Add(1)
	}
	return l
}

// mustKind panics unless k is one of kind's constants: every rule asks a
// lock's kind what its holds guarantee.
func mustKind(k kind.Kind) {
	if !k.Valid() {
		panic(fmt.Sprintf("class: a lock of no kind (%v)", k))
	}
}

// Name returns a human name: the class name and instance number for named
// classes ("store#2"), the site and instance number for a lock whose site
// is known ("store.(*DB).beginTx (db.go:801)#2", and for what is not a
// lock, its kind first: "Once config.Load (config.go:12)#1"), the kind and
// address otherwise ("Mutex@0xc000012345").
func (l *Lock) Name() string { return l.Label().Name() }

// ClassName returns the class's name: for an anonymous class, the site's
// name, or the lock's own name when its site is unknown.
func (l *Lock) ClassName() string { return l.Label().ClassName() }

// Label returns what l's names are made of, without formatting them and
// without referring to l, so it can be kept after l is gone.
func (l *Lock) Label() Label {
	return Label{Kind: l.Kind, Addr: l.addr, Class: l.Class, seq: l.seq, Site: l.Site}
}

// Label holds what a lock's names are made of.
type Label struct {
	Kind  kind.Kind
	Addr  uintptr
	Class *Class
	Site  *Site
	seq   uint64 // Lock.seq
}

// Name is Lock.Name.
func (b Label) Name() string {
	switch {
	case b.Class.Named:
		return fmt.Sprintf("%s#%d", b.Class.Name, b.seq)
	case b.Site != nil:
		if !b.Kind.Lock() {
			// Not a lock: say what it is ("Once pkg.f (f.go:3)#1").
			return b.Kind.String() + " " + b.Site.instanceName(b.seq)
		}
		return b.Site.instanceName(b.seq)
	}
	return fmt.Sprintf("%s@%#x", b.Kind, b.Addr)
}

// ClassName is Lock.ClassName.
func (b Label) ClassName() string {
	switch {
	case b.Class.Named:
		return b.Class.Name
	case b.Site != nil:
		return b.Site.name()
	}
	return b.Name()
}

// Func returns the function of the lock's site, "" if it has none.
func (b Label) Func() string {
	if b.Class.Named || b.Site == nil {
		return ""
	}
	return b.Site.Func
}

// SetHolder records goroutine gid as the writer holding l.
func (l *Lock) SetHolder(gid int64) {
	l.holder.Store(gid)
	l.moves.Add(1)
}

// Moves counts the changes of l's recorded holder (SetHolder and
// ClearHolder calls that changed it): a lock whose waiters wait while
// Moves grows is contended, not stuck.
func (l *Lock) Moves() uint64 { return l.moves.Load() }

// Holder returns the goroutine recorded as holding l for writing, or 0.
// The value is the last writer to acquire l; it is meaningful while l is
// write-locked.
func (l *Lock) Holder() int64 { return l.holder.Load() }

// ClearHolder forgets the holder, so that the goroutine which acquired l no
// longer counts as holding it (l was released by someone else).
func (l *Lock) ClearHolder() {
	if l.holder.Load() != 0 {
		l.holder.Store(0)
		l.moves.Add(1)
	}
}

// SetNote records the held-profile token of the current write hold.
func (l *Lock) SetNote(n uint64) { l.note.Store(n) }

// SetFirst records st, a stack id of internal/stack, as where l was first
// acquired, unless that is recorded already.
func (l *Lock) SetFirst(st uint32) { l.first.CompareAndSwap(0, st) }

// First returns where l was first acquired, as recorded by SetFirst, 0 if
// unknown.
func (l *Lock) First() uint32 { return l.first.Load() }

// Note returns the token recorded by SetNote, 0 if none. It may be stale:
// a hold its owner released keeps its token here until the next.
func (l *Lock) Note() uint64 { return l.note.Load() }

// TakeNote returns and forgets the token recorded by SetNote, 0 if none:
// a release by another goroutine than the holder ends the hold's entry.
func (l *Lock) TakeNote() uint64 {
	if l.note.Load() == 0 {
		return 0
	}
	return l.note.Swap(0)
}

// Track reports whether this is the first call for l: the caller then
// arranges for l's graph nodes to be dropped once l is unreachable.
func (l *Lock) Track() bool { return !l.tracked.Swap(true) }
