package held

import (
	"runtime"
	"sync"
	"weak"

	"github.com/syncwatch/syncwatch/internal/class"
)

// DeadHold is a lock still held by a goroutine that has exited.
type DeadHold struct {
	Goroutine int64
	Entry     Entry
}

// DeadHolds returns the locks still held by the goroutines of states (all
// the states there are: internal/gls's States) that exited reports have
// exited, and those kept as graves (Bury) whose locks are reachable. The
// caller must ask
// exited only of what it saw after States returned (a goroutine dump
// taken then): a goroutine that has a state existed before.
func DeadHolds(states []*G, exited func(id int64) bool) []DeadHold {
	var out []DeadHold
	for _, g := range states {
		id := g.ID()
		if !exited(id) {
			continue
		}
		for _, e := range entriesOfExited(g) {
			if e.Lock != nil && g.Valid(&e) {
				out = append(out, DeadHold{Goroutine: id, Entry: e})
			}
		}
	}
	if gravesN.Load() > 0 {
		sweepMu.Lock()
		out = gravesHolds(out, seenHolds(out), nil)
		sweepMu.Unlock()
	}
	return out
}

// entriesOfExited copies the stack of g, whose goroutine has exited. Its
// last writes came before its exit, which nothing orders before this read
// as far as the race detector can see: the goroutine is gone, so no write
// can come after, and the read is kept out of the detector's sight.
//
//go:norace
func entriesOfExited(g *G) []Entry {
	out := make([]Entry, len(g.stack))
	for i := range g.stack { // not copy: the runtime's slicecopy checks races itself
		out[i] = g.stack[i]
	}
	return out
}

// sweepMu serializes ReachableDeadHolds, which clears and restores the
// exited goroutines' holds, and KeptHolds, which reads them.
var sweepMu sync.Mutex

// KeptHold is a hold an exited goroutine kept. It refers to its lock
// weakly, so that holding it keeps no lock reachable.
type KeptHold struct {
	Goroutine int64
	ID        uint64                   // the lock's
	Lock      weak.Pointer[class.Lock] // the lock, while it is reachable
	Moves     uint64                   // the lock's count of holder changes when seen
}

// KeptHolds returns, as values, the holds of the goroutines of states
// that exited reports have exited, and those kept as graves, for which
// keep returns true; keep may
// read the lock of the entry, but not keep it. The caller asks exited as
// DeadHolds's does. It returns too, once, the holds whose graves watched
// their locks (Watch) and saw them collected still held: their Lock is
// the zero weak pointer.
func KeptHolds(states []*G, exited func(id int64) bool, keep func(gid int64, e *Entry) bool) []KeptHold {
	sweepMu.Lock()
	defer sweepMu.Unlock()
	var out []KeptHold
	for _, g := range states {
		id := g.ID()
		if !exited(id) {
			continue
		}
		for _, e := range entriesOfExited(g) {
			if e.Lock != nil && g.Valid(&e) && keep(id, &e) {
				out = append(out, KeptHold{Goroutine: id, ID: e.Lock.ID, Lock: weak.Make(e.Lock), Moves: e.Lock.Moves()})
			}
		}
	}
	if len(graves) > 0 {
		pruneGraves() // the watched locks collected go to the dead gates
		gravesN.Store(int64(len(graves)))
	}
	for _, d := range takeDeadGates() {
		out = append(out, KeptHold{Goroutine: d.goroutine, ID: d.id})
	}
	if len(graves) > 0 {
		seen := make(map[deadKey]bool, len(out))
		for _, k := range out {
			seen[deadKey{k.Goroutine, k.ID}] = true
		}
		for _, h := range gravesHolds(nil, seen, keep) {
			l := h.Entry.Lock
			out = append(out, KeptHold{Goroutine: h.Goroutine, ID: l.ID, Lock: weak.Make(l), Moves: l.Moves()})
		}
	}
	return out
}

// ReachableDeadHolds is DeadHolds without the holds of locks that nothing
// reaches but the stacks of exited goroutines: no goroutine can wait for
// such a lock, which became garbage while held, and it harms no one. It
// tells them apart with one garbage collection, with the exited stacks'
// references cleared meanwhile, and drops their holds for good. A lock
// stays reachable through its own identity (a lockorder lock points to
// it), so this costs nothing per lock: the alternative, a weak pointer
// to every lock made at its first use, cost a walk of every other weak
// pointer into the same heap object (thousands of striped locks in one
// array).
func ReachableDeadHolds(states []*G, exited func(id int64) bool) []DeadHold {
	sweepMu.Lock()
	defer sweepMu.Unlock()
	type slot struct {
		g *G
		i int
		w weak.Pointer[class.Lock]
	}
	var slots []slot
	for _, g := range states {
		if !exited(g.ID()) {
			continue
		}
		for i, e := range entriesOfExited(g) {
			if e.Lock != nil && g.Valid(&e) {
				slots = append(slots, slot{g, i, weak.Make(e.Lock)})
			}
		}
	}
	if len(slots) == 0 && len(graves) == 0 {
		return nil
	}
	for _, s := range slots {
		setExitedLock(s.g, s.i, nil)
		forgetExitedEdges(s.g)
	}
	runtime.GC()
	var out []DeadHold
	for _, s := range slots {
		if l := s.w.Value(); l != nil {
			setExitedLock(s.g, s.i, l)
			out = append(out, DeadHold{Goroutine: s.g.ID(), Entry: entryOfExited(s.g, s.i)})
		}
	}
	pruneGraves() // the graves of the locks collected go for good
	gravesN.Store(int64(len(graves)))
	return gravesHolds(out, seenHolds(out), nil)
}

// forgetExitedEdges drops the order edges waiting on g, whose goroutine
// has exited: no release of its can prove them now, and they must not
// keep its locks reachable.
//
//go:norace
func forgetExitedEdges(g *G) { g.proving, g.waits = proving{owner: g}, waits{} }

// heavyEdges is how many edges from write holds waiting on a goroutine
// make its state worth a look at its goroutine's exit (Heavy).
const heavyEdges = 64

// Heavy reports whether many order edges wait on g (R23): if its
// goroutine has exited holding a lock, they wait for good. Any goroutine
// may call it; it reads a count without synchronisation, a hint.
//
//go:norace
func (g *G) Heavy() bool { return g.proving.n >= heavyEdges }

// HeavyEdges returns how many order edges wait on g, read as Heavy reads
// it.
//
//go:norace
func (g *G) HeavyEdges() int { return g.proving.n }

// setExitedLock sets the lock of entry i of g, whose goroutine has
// exited: see entriesOfExited.
//
//go:norace
func setExitedLock(g *G, i int, l *class.Lock) { g.stack[i].Lock = l }

// entryOfExited copies entry i of g, whose goroutine has exited: see
// entriesOfExited.
//
//go:norace
func entryOfExited(g *G, i int) Entry { return g.stack[i] }
