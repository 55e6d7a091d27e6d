package waitfor

import (
	"cmp"
	"slices"

	"github.com/syncwatch/syncwatch/internal/class"
)

// Graph is a snapshot of the registered waits, with the edges between
// them: each wait points at the goroutines whose action it needs. Edges are
// derived when the snapshot is taken, not kept up to date on every Lock,
// so that the only cost a wait adds to a lock is its registration.
type Graph struct {
	waits map[int64]*Wait
	// readers lists, per lock, the waiting goroutines that hold it for
	// reading (a lock's readers are not recorded on the lock itself).
	readers map[*class.Lock][]int64
	// writers lists, per lock, the goroutines waiting to write-lock it.
	writers map[*class.Lock][]int64
}

// Snapshot returns the graph of the waits registered now.
func Snapshot() *Graph {
	all := All()
	g := &Graph{
		waits:   make(map[int64]*Wait, len(all)),
		readers: map[*class.Lock][]int64{},
		writers: map[*class.Lock][]int64{},
	}
	slices.SortFunc(all, func(a, b *Wait) int { return cmp.Compare(a.Goroutine, b.Goroutine) })
	for _, w := range all {
		g.waits[w.Goroutine] = w
		for _, h := range w.Holds {
			if h.Read && h.Valid(w.Goroutine) {
				g.readers[h.Lock] = append(g.readers[h.Lock], w.Goroutine)
			}
		}
		if w.Kind == KindLock && w.Lock != nil {
			g.writers[w.Lock] = append(g.writers[w.Lock], w.Goroutine)
		}
	}
	return g
}

// Wait returns goroutine gid's wait in the snapshot, or nil.
func (g *Graph) Wait(gid int64) *Wait { return g.waits[gid] }

// Waits returns the snapshot's waits, oldest first.
func (g *Graph) Waits() []*Wait {
	out := make([]*Wait, 0, len(g.waits))
	for _, w := range g.waits {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *Wait) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.Goroutine, b.Goroutine))
	})
	return out
}

// Blockers returns the goroutines w needs to act before it can end, every
// one of them, in increasing order: a lock's writer, or, for a lock held
// for reading, the waiting goroutines known to hold it; a reader queued
// behind a writer needs the writer; other waits say themselves. It returns
// nil when nothing is known, or when any goroutine could end the wait.
func (g *Graph) Blockers(w *Wait) []int64 {
	if !w.IsLock() {
		if w.Blockers == nil {
			return nil
		}
		ids := w.Blockers(nil)
		slices.Sort(ids)
		return slices.Compact(ids)
	}
	if !w.HolderKnown {
		return nil
	}
	if h := w.Lock.Holder(); h != 0 {
		next := g.waits[h]
		if next == nil || !next.IsLock() || !next.HolderKnown || next.holdsForWriting(w.Lock) {
			return []int64{h}
		}
		// The recorded holder waits for a lock where holds are tracked,
		// and does not list this one among its holds: the record is
		// stale (the holder let the lock go and waits for it again, and
		// the next holder has not recorded itself yet; or the lock was
		// taken where holders are not tracked). Whoever holds it now is
		// unknown, unless readers do.
	}
	if w.Kind == KindRLock {
		// Held for reading and not writable: this reader is queued behind
		// a writer, which goes first.
		return others(g.writers[w.Lock], w.Goroutine)
	}
	return slices.Clone(g.readers[w.Lock])
}

func others(ids []int64, self int64) []int64 {
	var out []int64
	for _, id := range ids {
		if id != self {
			out = append(out, id)
		}
	}
	return out
}

// Cycles returns the cycles of waits in the snapshot that no timeout or
// cancellation can break: each wait in a cycle needs the next one's
// goroutine, and the last needs the first's. A goroutine waiting for
// itself is a cycle of one. Each wait is in at most one returned cycle,
// and the same waits give the same cycles.
//
// An edge to a lock's holder counts only if the holder's own wait lists
// the lock among those it holds: the holder a lock records is the last
// goroutine to take it where holders are tracked, which is stale if it was
// taken since where they are not (a mode switch), and a cycle must not
// rest on it.
func (g *Graph) Cycles() [][]*Wait {
	const (
		white = iota
		grey
		black
	)
	color := make(map[int64]uint8, len(g.waits))
	var (
		path   []*Wait
		cycles [][]*Wait
		inOne  = map[int64]bool{}
	)
	var visit func(w *Wait)
	visit = func(w *Wait) {
		color[w.Goroutine] = grey
		path = append(path, w)
		for _, b := range g.Blockers(w) {
			next := g.waits[b]
			if next == nil || next.Bounded || !holds(w, next) {
				continue
			}
			switch color[b] {
			case white:
				visit(next)
			case grey:
				i := slices.IndexFunc(path, func(p *Wait) bool { return p.Goroutine == b })
				c := slices.Clone(path[i:])
				if !slices.ContainsFunc(c, func(p *Wait) bool { return inOne[p.Goroutine] }) {
					for _, p := range c {
						inOne[p.Goroutine] = true
					}
					cycles = append(cycles, c)
				}
			}
		}
		path = path[:len(path)-1]
		color[w.Goroutine] = black
	}
	for _, w := range g.Waits() {
		if !w.Bounded && color[w.Goroutine] == white {
			visit(w)
		}
	}
	return cycles
}

// holds reports whether next, a goroutine w needs, is known to hold what w
// waits for, when w waits for a lock it holds for writing; other edges
// need no proof.
func holds(w, next *Wait) bool {
	if !w.IsLock() || w.Lock.Holder() != next.Goroutine {
		return true
	}
	return next.holdsForWriting(w.Lock)
}

// holdsForWriting reports whether w lists l among the locks its goroutine
// holds for writing, with a hold still valid.
func (w *Wait) holdsForWriting(l *class.Lock) bool {
	for _, h := range w.Holds {
		if h.Lock == l && !h.Read && h.Valid(w.Goroutine) {
			return true
		}
	}
	return false
}
