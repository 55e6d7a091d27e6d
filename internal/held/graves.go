package held

import (
	"slices"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/syncwatch/syncwatch/internal/class"
)

// A goroutine that exits holding a lock of its own leaves its state busy
// for good. internal/gls frees such a state once a goroutine dump shows its
// goroutine gone (Bury), and keeps only its holds here, each as a grave:
// what the exit check needs to report the lock left held
// (held-by-exited-goroutine) and to apply docs/RULES.md R24 to it. A grave
// refers to its lock weakly, so that a lock nothing else reaches is
// collected and its grave goes with it. Where R24 would need the lock
// even once it is garbage (Watch), the grave watches it: should the lock
// be collected while still the exited goroutine's, its id is kept for the
// next exit check (DeadGates), at most MaxGraves of them. There are at
// most MaxGraves graves that have lived through a garbage collection since
// their burial; past that the oldest are dropped, and counted (Graves).
// The cap waits for that collection so that the graves of locks that
// became garbage go first, uncounted: at burial every lock is still
// reachable, from the states the last collection saw. A waiter blocked
// behind such a lock is still reported by the wait-for monitor, which
// reads the holder from the lock itself (class.Lock.Holder), not from
// here.

// MaxGraves is how many holds of exited goroutines are kept once their
// states are freed.
const MaxGraves = 4096

// grave is a hold of an exited goroutine: 40 bytes.
type grave struct {
	gid  int64
	w    weak.Pointer[class.Lock]
	note uint64 // the hold's Entry.Note
	gen  uint32 // its Entry.Gen
	born uint32 // collections when buried
	read bool   // its Entry.Read
	gate bool   // the grave watches its lock (Watch)
}

// lock returns g's lock, or nil once it is collected.
func (g *grave) lock() *class.Lock { return g.w.Value() }

// valid reports whether the hold is still its goroutine's: no other
// goroutine released it since (see G.Valid).
func (g *grave) valid(l *class.Lock) bool {
	if g.read {
		return l.ReadGen() == g.gen
	}
	return l.Holder() == g.gid
}

// entry returns g's hold as an Entry of lock l (without a chain key).
func (g *grave) entry(l *class.Lock) Entry {
	return Entry{Lock: l, Read: g.read, Gen: g.gen, Note: g.note}
}

var (
	// collections counts the garbage collections internal/gls saw end
	// (Collected).
	collections atomic.Uint32
	// graves are the holds Bury kept, oldest burial first (those of one
	// burial in no particular order). sweepMu guards them.
	graves []grave
	// gravesN is len(graves), read without sweepMu.
	gravesN atomic.Int64
	// gravesDropped counts the graves dropped for want of room.
	gravesDropped atomic.Int64
)

// Watch, when set (once, at initialization), reports whether the hold e
// of goroutine gid, which has exited, is one the exit check needs even
// once its lock is garbage (lockorder: a lock R24 would take out of
// gates, with an order edge seen under it). Bury calls it with e.Lock
// set.
var Watch func(gid int64, e *Entry) bool

// deadGate is a hold Watch chose whose lock was collected while still its
// exited goroutine's: the lock's id, for R24 to take out of gates.
type deadGate struct {
	goroutine int64
	id        uint64
}

var (
	// watchMu guards watched and deadGates. It is taken after sweepMu.
	watchMu sync.Mutex
	// watched are the locks the graves watch (Watch): each still held by
	// its exited goroutine as far as a change of holder told (Unbury).
	watched map[weak.Pointer[class.Lock]]deadGate
	// deadGates are the watched locks collected while watched, for the
	// next exit check (DeadGates): fewer than 2*MaxGraves, the earliest
	// dropped down to MaxGraves when they reach it.
	deadGates []deadGate
)

// watch makes the grave of e, a write hold of goroutine gid, watch its
// lock. sweepMu is held.
func watch(gid int64, e *Entry, w weak.Pointer[class.Lock]) {
	watchMu.Lock()
	if watched == nil {
		watched = make(map[weak.Pointer[class.Lock]]deadGate)
	}
	watched[w] = deadGate{gid, e.Lock.ID}
	e.Lock.Gate.Bury()
	watchMu.Unlock()
}

// Unbury stops watching l, whose holder changed: l.Buried reported true.
// lockorder calls it at a new holder's acquisition and at a hand-off, once
// the holder is changed, so that a lock a goroutine released for an exited
// one is not taken out of gates once garbage: the release showed it to
// gate, or may have.
func Unbury(l *class.Lock) {
	watchMu.Lock()
	delete(watched, weak.Make(l))
	l.Gate.Unbury()
	watchMu.Unlock()
}

// unwatch stops watching the lock of g, if g watches it. sweepMu is held.
func unwatch(g *grave) {
	if !g.gate {
		return
	}
	g.gate = false
	watchMu.Lock()
	if d, ok := watched[g.w]; ok && d.goroutine == g.gid { // not another grave's watch of the lock
		delete(watched, g.w)
	}
	watchMu.Unlock()
}

// buried keeps the watched lock of g, collected, for the next exit check,
// if still watched. sweepMu is held.
func buried(g *grave) {
	if !g.gate {
		return
	}
	watchMu.Lock()
	if d, ok := watched[g.w]; ok && d.goroutine == g.gid {
		delete(watched, g.w)
		deadGates = append(deadGates, d)
		if len(deadGates) >= 2*MaxGraves {
			// The earliest past MaxGraves go, many at a time: one copy
			// per MaxGraves gates, not one per gate.
			n := len(deadGates) - MaxGraves
			deadGates = append(deadGates[:0], deadGates[n:]...)
			gravesDropped.Add(int64(n))
		}
	}
	watchMu.Unlock()
}

// takeDeadGates returns the watched locks collected since the last call,
// and forgets them. sweepMu is held.
func takeDeadGates() []deadGate {
	watchMu.Lock()
	defer watchMu.Unlock()
	ds := deadGates
	deadGates = nil
	if len(watched) == 0 {
		watched = nil // give the room back
	}
	return ds
}

// Bury keeps the holds still valid of g, whose goroutine a goroutine dump
// showed gone, as graves, and drops the order edges waiting on g: the
// caller frees g. The notes of the holds no longer valid are dropped.
func Bury(gs []*G) {
	if len(gs) == 0 {
		return
	}
	sweepMu.Lock()
	defer sweepMu.Unlock()
	born := collections.Load()
	for _, g := range gs {
		id := g.ID()
		for _, e := range entriesOfExited(g) {
			if e.Lock == nil {
				continue
			}
			if !g.Valid(&e) {
				dropNotes([]Entry{e})
				continue
			}
			gr := grave{gid: id, w: weak.Make(e.Lock), note: e.Note, gen: e.Gen, born: born, read: e.Read}
			if Watch != nil && !e.Read && Watch(id, &e) {
				gr.gate = true
				watch(id, &e, gr.w)
				// A change of holder before Bury set the lock's mark did
				// not see it: it is seen here (holder, then mark, on
				// either side).
				if !g.Valid(&e) {
					unwatch(&gr)
				}
			}
			graves = append(graves, gr)
		}
		forgetExitedEdges(g)
	}
	gravesN.Store(int64(len(graves)))
}

// Collected records that a garbage collection ended: internal/gls calls it
// from a cleanup that each collection runs, before its trim.
func Collected() { collections.Add(1) }

// settled reports whether g has lived through a whole garbage collection
// since its burial: one that started after it, whose end is counted
// (Collected) before the next count's. A lock that nothing else reaches
// is then collected, and g's weak pointer reads nil.
func (g *grave) settled(now uint32) bool { return now-g.born >= 2 }

// PruneGraves drops the graves of locks collected since, and of holds
// another goroutine released, and past MaxGraves settled graves the
// oldest, counted. internal/gls calls it after each collection.
func PruneGraves() {
	if gravesN.Load() == 0 {
		return
	}
	sweepMu.Lock()
	defer sweepMu.Unlock()
	pruneGraves()
	gravesN.Store(int64(len(graves)))
}

// pruneGraves is PruneGraves with sweepMu held.
func pruneGraves() {
	var gone []grave
	graves = slices.DeleteFunc(graves, func(g grave) bool {
		l := g.lock()
		if l != nil && g.valid(l) {
			return false
		}
		if l == nil {
			buried(&g)
		} else {
			unwatch(&g)
		}
		gone = append(gone, g)
		return true
	})
	dropGraveNotes(gone)
	// The graves left are reachable holds, or too young to tell: the cap
	// applies to the settled ones, a prefix (oldest first).
	now := collections.Load()
	n := 0
	for n < len(graves) && graves[n].settled(now) {
		n++
	}
	if n -= MaxGraves; n > 0 {
		for i := range graves[:n] {
			unwatch(&graves[i])
		}
		dropGraveNotes(graves[:n])
		graves = slices.Delete(graves, 0, n)
		gravesDropped.Add(int64(n))
	}
	// Give the room back once most graves are gone.
	if len(graves) == 0 {
		graves = nil
	} else if cap(graves) > 64 && len(graves) < cap(graves)/4 {
		graves = slices.Clone(graves)
	}
}

// dropGraveNotes drops the held-profile tokens of the holds gs.
func dropGraveNotes(gs []grave) {
	for i := range gs {
		if n := gs[i].note; token(n) && DropNote != nil {
			DropNote(n)
		}
	}
}

// gravesHolds appends to out the graves whose locks are reachable and still
// held by their goroutines, with their locks, for which keep (if not nil)
// returns true, skipping those seen (by goroutine and lock), and returns
// out. sweepMu is held.
func gravesHolds(out []DeadHold, seen map[deadKey]bool, keep func(gid int64, e *Entry) bool) []DeadHold {
	for i := range graves {
		g := &graves[i]
		l := g.lock()
		if l == nil || !g.valid(l) || seen[deadKey{g.gid, l.ID}] {
			continue
		}
		e := g.entry(l)
		if keep == nil || keep(g.gid, &e) {
			out = append(out, DeadHold{Goroutine: g.gid, Entry: e})
		}
	}
	return out
}

// deadKey names a hold of an exited goroutine: the goroutine and the
// lock's id.
type deadKey struct {
	gid int64
	id  uint64
}

// seenHolds returns the keys of hs, for gravesHolds to skip: a state read
// before Bury freed it lists the same holds as its graves.
func seenHolds(hs []DeadHold) map[deadKey]bool {
	if len(hs) == 0 {
		return nil
	}
	m := make(map[deadKey]bool, len(hs))
	for _, h := range hs {
		m[deadKey{h.Goroutine, h.Entry.Lock.ID}] = true
	}
	return m
}

// Graves reports how many holds of exited goroutines are kept as graves,
// and how many were dropped for want of room since the program started.
func Graves() (kept int, dropped int64) {
	return int(gravesN.Load()), gravesDropped.Load()
}
