package held

import (
	"slices"
	"time"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
)

// Order edges from read holds wait on the goroutine that took them until
// the holds prove to be its own (docs/RULES.md R12); they are dropped when
// the lock's read generation moves on (R13).

// A Wait is the order edges of one acquisition whose sources are read
// holds: from each of Srcs to To. The acquisition's chain, Key, is cached
// (its edges are all in the graph) once every source has proved its own;
// not if one was dropped. Acquisitions with the same edges (a lock taken
// in many chains under the same read holds) wait as one Wait, which keeps
// up to maxKeys of their chains to cache (see hold).
type Wait struct {
	Key chain.Key
	// more are the other chains whose edges are these (see Keys).
	more []chain.Key
	// To is the lock acquired, for reading if ToRead.
	To     *class.Lock
	ToRead bool
	// Gate holds the locks held for writing at the acquisition, other
	// than To (see graph.Observation).
	Gate graph.Gate
	// Stack and Time say where and when the acquisition was made.
	Stack uint32
	Time  time.Time
	// Epoch is the caller's epoch when the edges were seen: a Wait of
	// another epoch is stale (lockorder's Reset forgets what was seen).
	Epoch uint32
	// Srcs are the read holds the edges come from, one per lock.
	Srcs []Src
	// Complete is set in the Waits Settle returns whose every edge is now
	// proved: Key may be cached.
	Complete bool

	spoiled bool // a source was dropped: Key must not be cached
}

// Src is a read hold an edge comes from: of Lock, taken at its read
// generation Gen.
type Src struct {
	Lock *class.Lock
	Gen  uint32
}

// live reports whether s still rests on a hold that may be the
// goroutine's own.
func (s Src) live() bool { return s.Lock.ReadGen() == s.Gen }

// Keys returns the chains whose edges w's are: Key and the ones merged
// into it.
func (w *Wait) Keys() []chain.Key { return append([]chain.Key{w.Key}, w.more...) }

// hasKey reports whether key is one of w's chains.
func (w *Wait) hasKey(key chain.Key) bool {
	return w.Key == key || slices.Contains(w.more, key)
}

// dropKey removes key from w's chains, and reports whether w has none
// left.
func (w *Wait) dropKey(key chain.Key) bool {
	if i := slices.Index(w.more, key); i >= 0 {
		w.more = slices.Delete(w.more, i, i+1)
		return false
	}
	if w.Key != key {
		return false
	}
	if len(w.more) == 0 {
		return true
	}
	w.Key, w.more = w.more[len(w.more)-1], w.more[:len(w.more)-1]
	return false
}

// sameEdges reports whether v's edges are w's: the same sources, all
// standing (so at the same read generations), into the same graph node
// (the same lock, or one of its class where no source is of that class:
// edges are recorded between classes), the same way.
func (w *Wait) sameEdges(v *Wait) bool {
	if w.spoiled || w.Epoch != v.Epoch || w.ToRead != v.ToRead || len(w.Srcs) != len(v.Srcs) {
		return false
	}
	if w.To != v.To {
		if w.To.Class != v.To.Class {
			return false
		}
		for _, s := range v.Srcs {
			if s.Lock.Class == v.To.Class {
				return false // instance edges: the locks must be the same
			}
		}
	}
	for _, s := range v.Srcs {
		if !slices.Contains(w.Srcs, s) {
			return false
		}
	}
	return true
}

// waits are the order edges waiting on one goroutine for their proof. A G
// embeds them; only its owner touches them. The zero value has nothing
// waiting.
type waits struct {
	waits []Wait
	nwait int // the sources of waits, counted together
	// lost are the Waits dropped (hold) or left with no source standing
	// (spoiled) since G last looked: their read edges are not recorded,
	// and the edges of their acquisitions from write holds must not cache
	// them (G.Hold, G.Settle).
	lost []lostWait
}

// lostWait is a Wait whose edges are not recorded: its chains, and the
// sources that still stand (none if it was spoiled: one of them fell).
type lostWait struct {
	keys []chain.Key
	srcs []Src
}

// lose notes that w's edges are not recorded: see waits.lost.
func (ws *waits) lose(w *Wait) {
	lw := lostWait{keys: w.Keys()}
	if !w.spoiled {
		lw.srcs = slices.Clone(w.Srcs)
	}
	ws.lost = append(ws.lost, lw)
}

// MaxWaiting bounds the edges that wait on one goroutine (the sources of
// its Waits, counted together); edges already waiting, seen again in
// another chain, count once. Past it, hold drops the oldest Waits to make
// room: their edges are never recorded (unless seen again), since their
// holds may have been handed off. A cycle through one of them can be
// missed, none is made up.
const MaxWaiting = 64

// maxKeys bounds the chains one Wait keeps to cache. The chain of an
// acquisition merged past it is not cached: seen again, it is recorded
// anew, and merges again.
const maxKeys = 8

// waiting reports whether there is a Wait for chain key of the given
// epoch, and whether its every source still stands.
func (ws *waits) waiting(key chain.Key, epoch uint32) (found, stands bool) {
	for i := range ws.waits {
		w := &ws.waits[i]
		if w.Epoch != epoch || !w.hasKey(key) {
			continue
		}
		if w.spoiled {
			return true, false
		}
		for _, s := range w.Srcs {
			if !s.live() {
				return true, false
			}
		}
		return true, true
	}
	return false, false
}

// hold adds w to ws, after dropping the sources that no longer
// stand and w.Key from the other Waits (w sees its edges anew). A Wait
// with the same edges already waiting takes w in: w.Key is added to its
// chains, its gate narrowed to the locks both were taken under (as the
// graph merges two sightings of an edge), and the stack and time kept of
// the first, or of w if it narrowed the gate. Otherwise w is added, after the oldest Waits are dropped if there
// would be more than MaxWaiting edges waiting. It reports false, adding
// nothing, if w alone has more sources than that.
func (ws *waits) hold(w Wait) bool {
	ws.sweepWaits(w.Epoch, w.Key)
	if len(w.Srcs) > MaxWaiting {
		return false
	}
	for i := range ws.waits {
		if v := &ws.waits[i]; v.sameEdges(&w) {
			if gate := v.Gate.Intersect(w.Gate); gate.Len() < v.Gate.Len() {
				// w is what makes the edges able to block where v could
				// not: reports show w (as the graph shows the sighting
				// that narrowed an edge's gate).
				v.Gate, v.Stack, v.Time = gate, w.Stack, w.Time
			}
			if len(v.more) < maxKeys-1 {
				v.more = append(v.more, w.Key)
			}
			return true
		}
	}
	drop := 0
	for ws.nwait+len(w.Srcs) > MaxWaiting {
		ws.nwait -= len(ws.waits[drop].Srcs)
		ws.lose(&ws.waits[drop])
		drop++
	}
	ws.waits = slices.Delete(ws.waits, 0, drop)
	w.Complete, w.spoiled, w.more = false, false, nil
	ws.waits = append(ws.waits, w)
	ws.nwait += len(w.Srcs)
	return true
}

// settle is called when the goroutine has released itself its last read hold of l
// that it held validly. It returns the edges this proved: for each Wait
// with sources of l at l's current read generation, a copy whose Srcs are
// those, and Complete if no other source of it waits. It forgets them, and
// every source that no longer stands (of l or of another lock), with the
// Waits of another epoch than epoch.
func (ws *waits) settle(l *class.Lock, epoch uint32) []Wait {
	if len(ws.waits) == 0 {
		return nil
	}
	var proved []Wait
	kept := ws.waits[:0]
	ws.nwait = 0
	for _, w := range ws.waits {
		if w.Epoch != epoch {
			continue
		}
		var mine []Src
		left := w.Srcs[:0]
		for _, s := range w.Srcs {
			switch {
			case !s.live():
				w.spoiled = true
			case s.Lock == l:
				mine = append(mine, s)
			default:
				left = append(left, s)
			}
		}
		clear(w.Srcs[len(left):])
		w.Srcs = left
		if len(mine) > 0 {
			p := w
			p.Srcs = mine
			p.Complete = len(left) == 0 && !w.spoiled
			proved = append(proved, p)
		}
		if len(left) > 0 {
			kept = append(kept, w)
			ws.nwait += len(left)
		} else if w.spoiled {
			ws.lose(&w)
		}
	}
	clear(ws.waits[len(kept):])
	ws.waits = kept
	return proved
}

// WaitsForKey reports whether a Wait stands for chain key: the chain must
// not be cached yet.
func (ws *waits) WaitsForKey(key chain.Key) bool {
	return slices.ContainsFunc(ws.waits, func(w Wait) bool { return w.hasKey(key) })
}

// HasWaits reports whether any edge waits: one load, for the release
// path.
func (ws *waits) HasWaits() bool { return len(ws.waits) > 0 }

// WaitingEdges returns the number of edges waiting.
func (ws *waits) WaitingEdges() int { return ws.nwait }

// sweepWaits forgets the sources that no longer stand, the Waits of
// another epoch than epoch, and the Waits for key.
func (ws *waits) sweepWaits(epoch uint32, key chain.Key) {
	kept := ws.waits[:0]
	ws.nwait = 0
	for _, w := range ws.waits {
		if w.Epoch != epoch || w.hasKey(key) && w.dropKey(key) {
			continue
		}
		left := w.Srcs[:0]
		for _, s := range w.Srcs {
			if s.live() {
				left = append(left, s)
			} else {
				w.spoiled = true
			}
		}
		clear(w.Srcs[len(left):])
		w.Srcs = left
		if len(left) > 0 {
			kept = append(kept, w)
			ws.nwait += len(left)
		} else {
			ws.lose(&w) // every source gone: spoiled
		}
	}
	clear(ws.waits[len(kept):])
	ws.waits = kept
}

// Standing reports whether the edges of chain key, of the given epoch,
// need not be seen again: those from read holds wait, every source
// standing, and those from write holds, if any wait, all standing too
// (proving.provingKey). A chain with a source fallen on either side (a
// hold another goroutine released, R13, R23) is seen anew: a hold taken
// again since is a new one, whose edges are to be recorded. It is two
// length tests when nothing waits.
func (g *G) Standing(key chain.Key, epoch uint32) bool {
	if len(g.waits.waits) > 0 {
		if found, stands := g.waits.waiting(key, epoch); found {
			return stands && (!g.WaitsOnKey(key) || g.provingKey(key, epoch))
		}
	}
	return g.provingKey(key, epoch)
}

// Hold is waits.hold, telling proving the chains whose read edges it
// dropped (proving.lose).
func (g *G) Hold(w Wait) bool {
	ok := g.waits.hold(w)
	g.noteLost()
	return ok
}

// Settle is waits.settle, telling proving the chains whose read edges
// were spoiled (proving.lose).
func (g *G) Settle(l *class.Lock, epoch uint32) []Wait {
	ws := g.waits.settle(l, epoch)
	g.noteLost()
	return ws
}

// noteLost tells proving the chains waits lost since it last looked.
func (g *G) noteLost() {
	for _, l := range g.waits.lost {
		for _, k := range l.keys {
			g.proving.lose(k, l.srcs)
		}
	}
	clear(g.waits.lost)
	g.waits.lost = g.waits.lost[:0]
}
