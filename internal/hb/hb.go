// Package hb is the happens-before order syncwatch can see: vector clocks
// over goroutines, advanced only by syncwatch's own synchronisation that
// every run keeps (a WaitGroup's Done and Wait, WaitGroup.Go, a Once's
// completion, a barrier's generation), and the sightings of an order edge
// they order. Two
// edges whose every sightings are ordered so cannot be pending at once:
// no cycle through both can deadlock (docs/RULES.md R21).
//
// Program order alone orders nothing here: the edges one goroutine took
// stand for code that other goroutines may run, as a lock-order checker
// must assume. Only a sighting of another goroutine, ordered after by
// synchronisation, is "after".
package hb

import "sync/atomic"

// Fork and Learn, when set (by lockorder, at initialization), are the
// calling goroutine's clock for the syncwatch packages that synchronise
// goroutines of their own (a barrier's generation): Fork returns what the
// caller knows, with its own events up to now (nil if nothing, or not in
// check mode), and its next sighting takes a new epoch; Learn makes the
// caller know what c knows, c being from Forks that happened before.
var (
	Fork  func() *Clock
	Learn func(c *Clock)
)

// tick is the epoch source. Each G takes a block of epochs from it, and
// uses them one after the other: the epochs of one goroutine grow even
// across its records (a goroutine whose state was dropped gets a new G),
// and two of its epochs that follow each other (e, e+1) have none of its
// own between them.
var tick atomic.Uint64

// epochBlock is how many epochs a G takes from tick at a time.
const epochBlock = 1 << 20

// newBlock returns the first epoch of a block of epochs of a G's own.
func newBlock() uint64 { return tick.Add(epochBlock) - epochBlock + 1 }

// serials numbers the Gs: a chain cache entry names its recorder by it.
var serials atomic.Uint64

// G is one goroutine's clock: its epoch and what it knows of the others.
// Only its goroutine calls its methods, except Watch and those of Sight,
// which the engine calls under its lock.
type G struct {
	// ID is the goroutine's id.
	ID int64
	// Serial names this G among all others ever made.
	Serial uint64
	// Salt is a value of its epoch that the owner mixes into the keys of
	// the chains it takes into a watched lock (see Watch, Salts): each is
	// recorded once more at each new epoch.
	Salt uint64

	known  *Clock
	forked *Clock // known with this epoch, while both stand (see Fork)
	// The holds at stack positions below oldDepth may have been taken
	// before an Acquire: they knew only oldKnown (see KnownAt).
	oldDepth int
	oldKnown *Clock
	learnt   *Clock // the clock last joined into known: a repeat is free
	dirty    bool   // a release or an Acquire since the epoch was taken: see Advance
	epoch    atomic.Uint64

	// watches are the locks (graph nodes) whose edges g's sightings held
	// a cycle back through, each with g's epoch when it was first
	// watched; past len(watches) every lock is (all, from allEpoch).
	watches  [maxWatches]watch
	nwatch   atomic.Int32
	all      atomic.Bool
	allEpoch atomic.Uint64
}

const maxWatches = 8

type watch struct{ node, epoch atomic.Uint64 }

// NewG returns the clock of goroutine id, knowing what inherited knows
// (nil: nothing), at a new epoch.
func NewG(id int64, inherited *Clock) *G {
	g := &G{ID: id, Serial: serials.Add(1), known: inherited}
	g.epoch.Store(newBlock())
	return g
}

// Epoch returns g's epoch, advancing it first if g released since it
// was taken (see Advance).
func (g *G) Epoch() uint64 {
	g.Advance()
	return g.epoch.Load()
}

// KnownAt returns what g knew, at least, when it took the hold now at
// position i of its stack. An edge from that hold happened after what
// this knows, not after what g learnt while holding it: a goroutine that
// holds B and waits for another to finish may hold B while that one
// waits for B. Positions only move down as holds below them go, so a hold
// at or above the depth of an Acquire is newer than it.
func (g *G) KnownAt(i int) *Clock {
	if i < g.oldDepth {
		return g.oldKnown
	}
	return g.known
}

// Advance starts a new epoch if g released or learnt since its epoch was
// taken: what g does from now on did not happen before that release, and
// knows what it learnt. An epoch is advanced lazily, at g's next sighting, so that a goroutine releasing
// many times between sightings (a loop of Go calls, say) has one epoch
// for them all. Advance reports whether it advanced.
func (g *G) Advance() bool {
	if !g.dirty {
		return false // the common case, inlined
	}
	g.advance()
	return true
}

// advance is Advance's rare half.
func (g *G) advance() {
	g.dirty, g.forked = false, nil
	e := g.epoch.Load() + 1
	if e%epochBlock == 1 {
		e = newBlock() // this block is used up: a gap in g's epochs
	}
	g.epoch.Store(e)
	g.Salt = e
}

// Release publishes what g knows, and its own events up to now, to the
// clock at p: the acquire that reads p later happens after them.
func (g *G) Release(p *atomic.Pointer[Clock]) { Publish(p, g.Fork()) }

// Publish joins c into the clock at p.
func Publish(p *atomic.Pointer[Clock], c *Clock) {
	for {
		old := p.Load()
		nc := Join(old, c)
		if nc == old || p.CompareAndSwap(old, nc) {
			return
		}
	}
}

// Fork returns what g knows with its own events up to now, for a
// goroutine g starts (or a Release): its events happen after them. g's
// next sighting takes a new epoch.
func (g *G) Fork() *Clock {
	if g.forked == nil {
		g.forked = g.known.with(g.ID, g.epoch.Load())
	}
	g.dirty = true
	return g.forked
}

// Acquire makes g, holding depth locks, know what c knows: c was read
// from a release that happened before. The holds g has now knew less
// (see KnownAt).
func (g *G) Acquire(c *Clock, depth int) {
	if depth == 0 {
		g.oldDepth, g.oldKnown = 0, nil
	}
	if c.empty() || c == g.learnt || g.known.covers(c) {
		return
	}
	g.learnt = c
	if depth > 0 {
		if g.oldDepth == 0 {
			g.oldKnown = g.known
		}
		g.oldDepth = max(g.oldDepth, depth)
	}
	g.known, g.forked = Acquired(g.known, c), nil
	// Its next sighting knows more: a new epoch, recorded anew where its
	// sightings are watched.
	g.dirty = true
}

// Watch marks node, a lock's graph node, as one into which g's sightings
// held a cycle back, and returns the epoch from which on each of g's
// sightings of an edge into it is recorded: g salts the keys of the
// chains it takes into node with its epoch (Salts), so that they miss the
// chain cache once at each epoch. The sightings up to the epoch returned
// may not all have been recorded. Called under the engine's lock.
func (g *G) Watch(node uint64) uint64 {
	n := int(g.nwatch.Load())
	for i := range n {
		if g.watches[i].node.Load() == node {
			return g.watches[i].epoch.Load()
		}
	}
	if g.all.Load() {
		return g.allEpoch.Load()
	}
	// Each mark is stored before the epoch is read: an Advance that
	// stored a new epoch before its owner read the marks (Salts) is seen
	// in the load that follows.
	if n == maxWatches {
		g.all.Store(true)
		g.allEpoch.Store(g.epoch.Load())
		return g.allEpoch.Load()
	}
	w := &g.watches[n]
	w.node.Store(node)
	g.nwatch.Store(int32(n + 1))
	w.epoch.Store(g.epoch.Load())
	return w.epoch.Load()
}

// Salts reports whether the owner salts the key of a chain into the lock
// whose graph nodes are node and class (see Watch).
func (g *G) Salts(node, class uint64) bool {
	if g.nwatch.Load() == 0 {
		return false // the common case, inlined
	}
	return g.salts(node, class)
}

// salts is Salts for a G that watches some lock.
func (g *G) salts(node, class uint64) bool {
	n := int(g.nwatch.Load())
	if g.all.Load() {
		return true
	}
	for i := range n {
		if x := g.watches[i].node.Load(); x == node || x == class {
			return true
		}
	}
	return false
}
