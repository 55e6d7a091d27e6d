package held

import (
	"time"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
)

// Order edges from read holds wait on the goroutine that took them until
// the holds prove to be its own. sync.RWMutex lets one goroutine RLock and
// another RUnlock, so a goroutine that takes Y while it seems to read-hold
// X may have handed X's hold over already: the edge X->Y is then not an
// order its code keeps. The edge stands once the goroutine releases X
// itself, its last read hold of X, while X's read generation is the one
// of the hold (no goroutine released a read hold of X it did not hold in
// between); it is dropped when the generation moves on.

// A Wait is the order edges of one acquisition whose sources are read
// holds: from each of Srcs to To. The acquisition's chain, Key, is cached
// (its edges are all in the graph) once every source has proved its own;
// not if one was dropped.
type Wait struct {
	Key chain.Key
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

// MaxWaiting bounds the edges that wait on one goroutine (the sources of
// its Waits, counted together). Hold refuses a Wait past it, and the
// caller records its edges at once instead: better a report that may rest
// on a handed-off hold than a report lost.
const MaxWaiting = 64

// Waiting reports whether g has a Wait for chain key of the given epoch
// whose every source still stands: its edges need not be seen again. It
// is one length test when nothing waits.
func (g *G) Waiting(key chain.Key, epoch uint32) bool {
	if len(g.waits) == 0 {
		return false
	}
	return g.waiting(key, epoch)
}

func (g *G) waiting(key chain.Key, epoch uint32) bool {
	for i := range g.waits {
		w := &g.waits[i]
		if w.Key != key || w.spoiled || w.Epoch != epoch {
			continue
		}
		for _, s := range w.Srcs {
			if !s.live() {
				return false
			}
		}
		return true
	}
	return false
}

// Hold adds w to g's Waits, after dropping the sources that no longer
// stand and any other Wait for w.Key (w sees its edges anew). It reports
// false, adding nothing, if g would then have more than MaxWaiting edges
// waiting.
func (g *G) Hold(w Wait) bool {
	g.sweepWaits(w.Epoch, w.Key)
	if g.nwait+len(w.Srcs) > MaxWaiting {
		return false
	}
	w.Complete, w.spoiled = false, false
	g.waits = append(g.waits, w)
	g.nwait += len(w.Srcs)
	return true
}

// Settle is called when g has released itself its last read hold of l
// that it held validly. It returns the edges this proved: for each Wait
// with sources of l at l's current read generation, a copy whose Srcs are
// those, and Complete if no other source of it waits. It forgets them, and
// every source that no longer stands (of l or of another lock), with the
// Waits of another epoch than epoch.
func (g *G) Settle(l *class.Lock, epoch uint32) []Wait {
	if len(g.waits) == 0 {
		return nil
	}
	var proved []Wait
	kept := g.waits[:0]
	g.nwait = 0
	for _, w := range g.waits {
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
			g.nwait += len(left)
		}
	}
	clear(g.waits[len(kept):])
	g.waits = kept
	return proved
}

// HasWaits reports whether any edge waits on g: one load, for the release
// path.
func (g *G) HasWaits() bool { return len(g.waits) > 0 }

// WaitingEdges returns the number of edges waiting on g.
func (g *G) WaitingEdges() int { return g.nwait }

// sweepWaits forgets the sources that no longer stand, the Waits of
// another epoch than epoch, and the Waits for key.
func (g *G) sweepWaits(epoch uint32, key chain.Key) {
	kept := g.waits[:0]
	g.nwait = 0
	for _, w := range g.waits {
		if w.Epoch != epoch || w.Key == key {
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
			g.nwait += len(left)
		}
	}
	clear(g.waits[len(kept):])
	g.waits = kept
}
