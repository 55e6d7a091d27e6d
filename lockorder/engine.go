//go:build !syncwatch_off

package lockorder

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/hb"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
)

// The checking engine. Its hot path (a lock sequence seen before) touches
// only the calling goroutine's held stack and the lock-free chain cache.
// Everything under eng.mu is slow-path work: recording new edges, searching
// for cycles, dropping dead locks. No user code runs under eng.mu.
var (
	chains chain.Set
	eng    struct {
		mu    sync.Mutex
		graph graph.Graph
		nodes map[graph.NodeID]nodeInfo
		peak  int // most nodes since eng.nodes was last rebuilt
		// classes indexes eng.nodes by class.
		classes byClass
		// wgates maps a class's id to its writers' gate, for the classes
		// whose every blocking write so far was made holding a lock for
		// writing (class.Gated): the locks held at every one (see
		// writeUnder).
		wgates map[uint64]graph.Gate
		// ungated holds what R24 took out of gates, by lock id, for
		// regate (keptholds.go).
		ungated map[uint64]ungated
		// sightPair is sightPair once a lock of a named class was made
		// (enableRoles), nil before: only such a lock has pairs worth
		// telling the graph (R26), and a program that names no lock
		// links none of it. rolesOn says it is set.
		sightPair func(from, to *class.Lock, fromRead bool) []*graph.Edge
		rolesOn   atomic.Bool
		// copied is set once a used lock was copied (rebind), and
		// assumeSeen by a test that says every acquisition was seen
		// whatever came before (see pairsSeen).
		copied     atomic.Bool
		assumeSeen bool
	}
)

// installHooks gives the internal packages what they call back. A named
// class the graph knows of stays after its last lock dies, up to a bound
// (see internal/class); the graph drops the node of one freed. A hold
// forgotten (see internal/held) leaves the held profile.
func installHooks() {
	class.Forget = forgetClass
	held.DropNote = dropNote
	held.Watch = watchKept
	gls.Made = adoptGroup
	hb.Fork, hb.Learn = forkClock, learnNow
}

// nodeInfo is what the engine knows of a graph node. It must not refer to
// the lock itself, or the lock could never be collected; its names are
// formatted only when a report or a picture needs them.
type nodeInfo struct {
	cls      *class.Class
	label    class.Label
	id       uint64
	instance bool
}

// ref returns the node's name for reports: a named class's name, or the
// lock's own for an instance node and for the one lock of an anonymous
// class (whose class name, its site's, other locks share).
func (n nodeInfo) ref() LockRef {
	if n.instance || !n.cls.Named {
		return LockRef{Name: n.label.Name(), Class: n.label.ClassName(), Func: n.label.Func(), ID: n.id}
	}
	name := n.label.ClassName()
	return LockRef{Name: name, Class: name, ID: n.id}
}

// code returns what the node is in the code, for a cycle's report key:
// the class name of a named class (of an instance node too). A zero-value
// lock's name is the function that first locked that instance, which
// differs between instances of one field, so it is left out: the lines
// that took the lock stand for it (see cycleViolation). A lock whose site
// is unknown is only itself.
func (n nodeInfo) code() string {
	switch {
	case n.cls.Named:
		return n.label.ClassName()
	case n.label.Site != nil:
		return "-"
	}
	return fmt.Sprintf("node %d", n.id)
}

const (
	elemRead = 1 << iota
	elemTry
)

func elemOf(id uint64, read, try bool) uint64 {
	e := id << 2
	if read {
		e |= elemRead
	}
	if try {
		e |= elemTry
	}
	return e
}

// keyed computes the chain keys of l, a new lock identity, and returns it.
//
// A chain key is made of lock instances, not classes, though edges join
// classes: see RULES.md R2.
func keyed(l *class.Lock) *class.Lock {
	ew, er := elemOf(l.ID, false, false), elemOf(l.ID, true, false)
	l.SetKeys(ew, uint64(chain.Extend(0, ew)), er, uint64(chain.Extend(0, er)))
	return l
}

// current returns the calling goroutine's state under mode word w.
func current(w uint32) *held.G {
	gs := gls.Get(goid.ID())
	gs.Retag(w)
	return gs
}

// enter runs before a blocking acquisition by gs of the mutex m, whose
// identity is l: it reports a recursive acquisition and pushes the lock.
// The entry does not count as a hold until the caller records itself as
// the lock's holder (for a write) once it is acquired. It returns m's
// identity, l unless m turned out to be a copy (see recursive); whether gs
// already held it (if so the caller must call reacquired after
// acquiring); and whether the acquisition makes a lock chain never seen
// before: then, still before it can block, the caller must call
// newChain(gs, stack.Capture()), capturing the stack in its own frame.
// runtime.Callers costs more with every frame it unwinds, and three frames
// fewer measured a third cheaper per new edge.
//
// The callers inline the common case themselves: nothing held and l's class
// already known to have writers.
//
// init says the acquisition is l's initialisation write (see use): it
// does not count as a write of l's class, so it neither marks the class
// written nor narrows its writers' gate; nothing is held, so there is no
// edge or recursion to see to either, and l is pushed marked Init.
func enter(gs *held.G, m owner, l *class.Lock, read, init bool) (_ *class.Lock, again, fresh bool) {
	if init {
		gs.Push(held.Entry{Lock: l, Elem: l.Elem(false), Chain: chain.Key(l.Chain(false))})
		gs.MarkInit()
		return l, false, false
	}
	if gs.Len() > 0 {
		dropHandedOff(gs) // before R25's depth, which counts the holds still gs's own
	}
	deep := tooDeep(gs) // a write deeper than R25's bound is not seen
	if !read && !l.Class.Written() && !deep {
		firstWrite(gs, l)
	}
	e := held.Entry{Lock: l, Read: read, Elem: l.Elem(read)}
	if deep {
		e.MarkUnseen()
	}
	if gs.Len() == 0 {
		e.Chain = chain.Key(l.Chain(read))
	} else {
		fresh = prepareNested(gs, m, &e)
	}
	if !read && !fresh && e.Lock.Class.Gated() && (gs.Len() == 0 || e.Again) && !deep {
		// A write the chain cache does not stand for (nothing held, or a
		// write over a read hold): it narrows its class's writers' gate
		// here, to the holds still valid. Every other write does in
		// recordEdges. (prepareNested has dropped the holds another
		// goroutine released: the chain counts none.)
		writeUnder(gs, e.Lock)
	}
	if read {
		e.Gen = e.Lock.ReadGen()
	}
	gs.Push(e)
	return e.Lock, e.Again, fresh
}

// enterSeen is begin and enter for the commonest nested acquisition, a
// write of a Plain lock l of a written class under gs's holds (one at
// least, fewer than R25's bound, none of them l's, and none handed off
// since gs last looked) whose chain is cached (seen): it pushes l's entry,
// as enter would, and reports true. Otherwise it changes nothing and
// reports false, for the caller to take the acquisition path: with
// nothing held, it does not even look the chain up, which would advance
// gs's epoch (R21) where the acquisition path does not. Mutex.lockSlow
// calls it, and writes out the steps after begin, since it is the hot path
// of bench/'s case (b): a call less and an entry written in place
// (held.G.PushHold) measured 38 ns a nested pair against 44 ns, sync's
// being 19.5 ns.
func enterSeen(gs *held.G, l *class.Lock) bool {
	if gs.Len() == 0 || !l.Plain() || !l.Class.Written() || tooDeep(gs) || handoffs.n.Load() != gs.Handoffs {
		return false
	}
	byLock := false
	ents := gs.Entries()
	for i := range ents {
		h := &ents[i]
		if h.Lock == l {
			return false
		}
		if namesLock(h, l) {
			byLock = true
		}
	}
	elem := l.Elem(false)
	k := chainAfter(gs, elem)
	if !seen(gs, edgesKeyOf(gs, l, false, k, byLock), l) {
		return false
	}
	gs.PushHold(l, false, 0, elem, k)
	return true
}

// newChain records the order edges into gs's newest entry, which enter
// pushed, with the stack st, and reports the cycles they close. The entry
// is off the stack meanwhile, as though enter had not pushed it yet: a
// handler that runs does not hold it, and one that panics leaves no trace
// of the acquisition that never happened.
func newChain(gs *held.G, st stack.ID) {
	e := *gs.Top()
	gs.PopUnnoted()
	if gs.Inits {
		nestedUnderInit(gs)
	}
	r := e
	r.Chain = edgesKey(gs, &e, keyByLock(gs, e.Lock))
	recordEdges(gs, r, st)
	gs.Push(e)
	markInto(gs, e.Lock)
}

// markInto marks gs's newest entry, a hold of l, if edges into l wait on
// gs (R23): its release is to be seen (held.proving.ReleasedInto), so
// that those edges are not taken for a nesting's if pushed out.
func markInto(gs *held.G, l *class.Lock) {
	if gs.ProvingInto(l.ID) {
		gs.MarkProving(gs.Len() - 1)
	}
}

// reacquired drops the older entries of l after a recursive acquisition
// went through: they are stale, since l was released by another goroutine
// before it could be taken again.
func reacquired(gs *held.G, l *class.Lock) {
	ents := gs.Entries()
	for i := len(ents) - 2; i >= 0; i-- {
		if ents[i].Lock == l && !ents[i].Read {
			gs.Remove(i)
			ents = gs.Entries()
		}
	}
}

// holds records gs as the writer holding l, once l is acquired.
func holds(gs *held.G, l *class.Lock) { holdsAs(l, gs.ID()) }

// holdsAs records the goroutine id as the writer holding l, once l is
// acquired: holds for a caller that has the id. It is small enough to
// inline: a lock its goroutine takes again and again costs a load.
func holdsAs(l *class.Lock, id int64) {
	if l.Holder() != id {
		holdsNew(l, id)
	}
}

// holdsNew is holds for a lock whose holder was another: it records the
// goroutine id as l's.
func holdsNew(l *class.Lock, id int64) {
	l.SetHolder(id)
	if !l.Gate.Watched() { // one load for the two marks below
		return
	}
	if l.Gate.Buried() {
		held.Unbury(l) // a grave's hold was released unseen
	}
	if l.Gate.Taken() && l.Gate.Untake() {
		// A kept hold R24 took out of gates was released unseen
		// (outside check mode): it was a hand-off.
		regate(l)
	}
}

// forgetLock drops a dead lock from the graph's set of loosened locks
// (R18).
func forgetLock(id graph.NodeID) {
	eng.mu.Lock()
	eng.graph.Forget(id)
	eng.mu.Unlock()
}

// handoffs counts the write holds released by another goroutine than
// their holder (unlockOther, after it clears the holder), and the read
// holds released by a goroutine that does not hold them (R13). Every nested
// acquisition in check mode reads it, and it moves rarely: it has a cache
// line of its own.
var handoffs struct {
	_ [64]byte
	n atomic.Uint32
	_ [60]byte
}

// handedOff counts a write hold of l released by another goroutine than
// its holder, once l's holder is cleared.
func handedOff(l *class.Lock) {
	l.ClearHolder()
	if l.Gate.Buried() {
		held.Unbury(l) // a grave's hold, released for its exited goroutine
	}
	handoffs.n.Add(1)
	if l.Gate.Under() && l.Gate.Show() {
		regate(l) // R24
	}
}

// dropHandedOff drops gs's holds no longer valid when handoffs has moved
// since gs last looked (RULES.md R14), so that the chain key, and the
// depth, are those of the holds still gs's own. That is one load of a
// rarely changing word.
func dropHandedOff(gs *held.G) {
	if n := handoffs.n.Load(); n != gs.Handoffs {
		gs.Handoffs = n
		gs.Prune()
	}
}

// prepareNested computes e's chain key after gs's held locks and reports a
// recursive acquisition of the mutex m. It reports whether the chain is
// new, with edges to record. The caller has dropped gs's holds handed off
// (dropHandedOff).
func prepareNested(gs *held.G, m owner, e *held.Entry) bool {
	l := e.Lock
	var again *held.Entry
	stale, byLock := false, false
	ents := gs.Entries()
	for i := range ents {
		h := &ents[i]
		if namesLock(h, l) {
			byLock = true
		}
		if h.Lock == l {
			if !gs.Valid(h) {
				stale = true
			} else if again == nil || !h.Read {
				c := *h
				again = &c
			}
		}
	}
	if stale {
		gs.Prune()
	}
	e.Chain = chainAfter(gs, e.Elem)
	if again != nil && recursive(gs, m, e, *again) {
		e.Again = true
		return false
	}
	if seen(gs, edgesKey(gs, e, byLock), e.Lock) {
		// Recorded, or its edges from read holds wait on gs already (a
		// loop under a read hold sees them once).
		return false
	}
	// A new chain: drop holds that ended in another goroutine's hands
	// before recording edges from them.
	if gs.Prune() {
		e.Chain = chainAfter(gs, e.Elem)
		if seen(gs, edgesKey(gs, e, byLock), e.Lock) {
			return false
		}
	}
	return gs.Len() > 0
}

// edgesKey returns the key under which the chain cache, and the edges
// from read holds that wait (R12), know the edges of gs's acquisition e,
// which is not on gs's stack: e.Chain, the chain of gs's holds followed
// by e's lock; or, for a lock of a named class, unless byLock (see
// namesLock), the chain of gs's holds followed by the class (RULES.md
// R2). The edges into a lock join its holds to its class, with gates
// that are its holds: which lock of the class it is changes none of them.
// So a program that makes a new lock of one class under the same read
// holds each time (a cache's node, locked under the cache's read lock)
// records their edges once, not once per lock (nor floods the cache with
// keys of locks taken once). e.Chain itself, which the locks taken under
// e's extend, is made of instances: e's lock is one of their gates.
func edgesKey(gs *held.G, e *held.Entry, byLock bool) chain.Key {
	return edgesKeyOf(gs, e.Lock, e.Read, e.Chain, byLock)
}

// edgesKeyOf is edgesKey for an acquisition of l, for reading if read,
// whose chain key is k.
func edgesKeyOf(gs *held.G, l *class.Lock, read bool, k chain.Key, byLock bool) chain.Key {
	if byLock || !l.Class.Named || !l.Kind.Lock() {
		return k
	}
	return chainAfter(gs, elemOf(l.Class.ID, read, false))
}

// namesLock reports whether hold h makes the key of the edges into l name
// l itself: h is of l's class (R2: those edges join instances), or a
// write hold whose edges wait for its own release (R23), which files
// them, and finds them for a deadlock's proof, by the lock taken.
func namesLock(h *held.Entry, l *class.Lock) bool {
	return h.Lock.Class == l.Class || !h.Read && h.Lock.Kind.WritesHandOff()
}

// keyByLock reports whether a hold of gs names l in the key of the edges
// into it (see namesLock).
func keyByLock(gs *held.G, l *class.Lock) bool {
	ents := gs.Entries()
	for i := range ents {
		if namesLock(&ents[i], l) {
			return true
		}
	}
	return false
}

// chainAfter returns the chain key of gs's held locks followed by elem.
func chainAfter(gs *held.G, elem uint64) chain.Key {
	var prev chain.Key
	if gs.Len() > 0 {
		prev = gs.Top().Chain
	}
	return chain.Extend(prev, elem)
}

// tryAcquired pushes a lock taken by a successful TryLock or TryRLock. It
// adds no edge into the lock, which is the From of what is taken while it
// is held (RULES.md R3).
//
// init says it is l's initialisation write (see use).
func tryAcquired(gs *held.G, l *class.Lock, read, init bool) {
	if gs.Len() > 0 {
		dropHandedOff(gs)
	}
	deep := tooDeep(gs) // a write deeper than R25's bound is not seen
	if !read && !init && !l.Class.Written() && !deep {
		// Written, with no writers' gate: a try does not queue, so it is
		// left out of the gate, and this keeps the class out of it too.
		firstWrite(nil, l)
	}
	if gs.Find(l) >= 0 {
		gs.Prune() // a stale hold of l (handed off) must not come back to life
	}
	e := held.Entry{Lock: l, Read: read, Try: true, Elem: elemOf(l.ID, read, true)}
	if deep && !init {
		e.MarkUnseen()
	}
	e.Chain = chainAfter(gs, e.Elem)
	if read {
		e.Gen = l.ReadGen()
	} else {
		holds(gs, l)
	}
	gs.Push(e)
	if init {
		gs.MarkInit()
	}
	if read && gs.HasPending() {
		gs.TookRead(l) // one more own hold to release (see held.Pending)
	}
}

// Initialisation writes (RULES.md R11): a lock's first check-mode
// acquisition, if it is a write with nothing else held, does not count as
// a write of its class until something seen shows the lock shared at that
// write. class.Lock keeps the state; the rule applies while initRule is
// set (check mode since lockorder's init, and never out of it).

// use records gs's check-mode acquisition of l, for reading if read, and
// reports whether it is l's initialisation write. An acquisition that
// shows l shared at its initialisation write makes that write count
// first. Once l is Plain it costs one atomic load, inlined; while l's
// initialisation write waits for a witness, a call and one more load for
// an acquisition that is none (class.Lock.Quiet).
func use(gs *held.G, l *class.Lock, read bool) bool {
	return !l.Plain() && useSlow(gs, l, read)
}

// useSlow is use for a lock that is not Plain.
func useSlow(gs *held.G, l *class.Lock, read bool) bool {
	if l.Quiet(gs.Seq()) {
		return false
	}
	noteFirst(l)
	// Only a class that can be read-locked has a writers' gate for an
	// initialisation write to spare: one of a kind that can
	// (kind.Kind.InitWrites), or a named class, which an RWMutex may
	// share. A Mutex of its own class is Plain from its first
	// acquisition, and pays nothing after it.
	init := !read && gs.Len() == 0 && initRule.Load() && (l.Kind.InitWrites() || l.Class.Named)
	switch l.Use(init, gs.ID(), gs.Seq(), held.Created) {
	case class.Init:
		return true
	case class.Shared:
		initShared(l)
	}
	return false
}

// noteFirst records where l is taken, if this is its first check-mode
// acquisition: once per lock, on the slow path of an acquisition (l is
// not Plain), for a report that it was left held (see ReportBlocked).
func noteFirst(l *class.Lock) {
	if l.Unused() && l.First() == 0 { // firstLockOf may have recorded it
		l.SetFirst(uint32(stack.Capture()))
	}
}

// initShared counts l's initialisation write, which something showed
// shared, as a write of its class made with nothing held: the class has
// writers now, and no writers' gate, and the cycles held back for want of
// either are reported.
func initShared(l *class.Lock) {
	if !l.Class.Settled() {
		firstWrite(nil, l)
	}
}

// witnessed reports whether the calling goroutine, acquiring l (or trying
// to) or releasing a hold another goroutine took, shows l shared at its
// initialisation write (class.Lock.Witness), l not being Plain: the
// caller then passes l to initShared, once l is released if it releases
// it.
func witnessed(l *class.Lock) bool {
	id := goid.ID()
	return l.Witness(id, ownSeq(id))
}

// nestedUnderInit counts the initialisation writes gs holds, now that it
// takes another lock under them: that is evidence of sharing (RULES.md
// R11). gs.Inits says it may have some.
// newChain calls it: a lock taken under an initialisation write makes a
// new chain, since that write was the first acquisition of its lock.
func nestedUnderInit(gs *held.G) {
	gs.Inits = false
	ents := gs.Entries()
	for i := range ents {
		if e := &ents[i]; e.Init {
			e.Init = false
			if e.Lock.CountInit() {
				initShared(e.Lock)
			}
		}
	}
}

// initWaits is called when l's initialisation write, gs's newest entry,
// cannot take l at once: l is held by another goroutine, so shared, and
// the write counts. The entry is off the stack meanwhile, as in newChain.
func initWaits(gs *held.G, l *class.Lock) {
	if !l.CountInit() {
		return
	}
	e := *gs.Top()
	gs.PopUnnoted()
	initShared(l)
	e.Init, e.Note = false, 0 // a write that counts, with no token yet
	gs.Push(e)
}

// tryFailed is called when a TryLock or TryRLock of the lock whose
// identity is at p fails: in check mode, the try may show l shared at its
// initialisation write (see witnessed).
func tryFailed(p *atomic.Pointer[class.Lock]) {
	if Mode(modeWord.Load()&modeMask) != ModeCheck {
		return
	}
	if l := p.Load(); l != nil && !l.Plain() && witnessed(l) {
		initShared(l)
	}
}

// releasedInit is called when l, write-held, is released by a goroutine
// that does not hold it, before l is released: if the release shows l
// shared at its initialisation write (the hold released is that write, or
// the releaser was there when it was made), it returns l, which the
// caller passes to initShared once l is released. If the holder of the
// initialisation write released it itself (its records were dropped by a
// mode switch), that write ends as its holder's release ends it.
func releasedInit(l *class.Lock) *class.Lock {
	if l.Plain() {
		return nil
	}
	if witnessed(l) {
		return l
	}
	l.EndInit()
	return nil
}
