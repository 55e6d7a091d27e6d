package held

import (
	"slices"
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
// collected and its grave goes with it; it pins the lock (a strong
// reference) only where R24 would need the lock even once it is garbage
// (Pin). There are at most MaxGraves; past that the oldest is dropped,
// and counted (GravesDropped). A waiter blocked behind such a lock is
// still reported by the wait-for monitor, which reads the holder from the
// lock itself (class.Lock.Holder), not from here.

// MaxGraves is how many holds of exited goroutines are kept once their
// states are freed.
const MaxGraves = 4096

// grave is a hold of an exited goroutine: 40 bytes.
type grave struct {
	gid  int64
	w    weak.Pointer[class.Lock]
	pin  *class.Lock // the lock, while the grave pins it
	note uint64      // the hold's Entry.Note
	gen  uint32      // its Entry.Gen
	read bool        // its Entry.Read
}

// lock returns g's lock, or nil once it is collected.
func (g *grave) lock() *class.Lock {
	if g.pin != nil {
		return g.pin
	}
	return g.w.Value()
}

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
	// graves are the holds Bury kept, oldest first. sweepMu guards them.
	graves []grave
	// gravesN is len(graves), read without sweepMu.
	gravesN atomic.Int64
	// gravesDropped counts the graves dropped for want of room.
	gravesDropped atomic.Int64
)

// Pin, when set (once, at initialization), reports whether the hold e of
// goroutine gid, which has exited, must keep its lock reachable until an
// exit check has seen it (lockorder: a lock R24 would take out of gates,
// with an order edge seen under it). Bury calls it with e.Lock set.
var Pin func(gid int64, e *Entry) bool

// Bury keeps the holds still valid of g, whose goroutine a goroutine dump
// showed gone, as graves, and drops the order edges waiting on g: the
// caller frees g. The notes of the holds no longer valid are dropped.
func Bury(gs []*G) {
	if len(gs) == 0 {
		return
	}
	sweepMu.Lock()
	defer sweepMu.Unlock()
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
			gr := grave{gid: id, w: weak.Make(e.Lock), note: e.Note, gen: e.Gen, read: e.Read}
			if Pin != nil && Pin(id, &e) {
				gr.pin = e.Lock
			}
			graves = append(graves, gr)
		}
		forgetExitedEdges(g)
	}
	if len(graves) > MaxGraves {
		pruneGraves()
	}
	if n := len(graves) - MaxGraves; n > 0 {
		dropGraveNotes(graves[:n])
		graves = slices.Delete(graves, 0, n)
		gravesDropped.Add(int64(n))
	}
	gravesN.Store(int64(len(graves)))
}

// PruneGraves drops the graves of locks collected since, and of holds
// another goroutine released. internal/gls calls it after each collection.
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
		if l := g.lock(); l != nil && g.valid(l) {
			return false
		}
		gone = append(gone, g)
		return true
	})
	dropGraveNotes(gone)
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
