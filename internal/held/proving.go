package held

import (
	"slices"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
)

// Order edges from write holds of a lock another goroutine may unlock (a
// Mutex's) wait on the goroutine that took them until it releases the
// hold itself (docs/RULES.md R23): a hold handed to another goroutine to
// release was that goroutine's, and the edges seen under it are no order
// the code keeps.

// An Edge is one order edge from a write hold waiting for its proof.
type Edge struct {
	// Key is the chain of the acquisition that saw the edge, salted as
	// the chain cache keys it: cached once none of its edges waits.
	Key chain.Key
	// From is the lock held, To the lock acquired; Obs is the sighting,
	// as the graph is to get it.
	From, To *class.Lock
	Obs      graph.Observation
	// Moves is From.Moves() when the edge was seen: the hold is the same
	// while that is unchanged (a release by another goroutine changes it).
	Moves uint64
	// Epoch is the caller's epoch when the edge was seen (see Wait).
	Epoch uint32
}

// live reports whether e still rests on the hold it was seen under.
func (e *Edge) live() bool { return e.From.Moves() == e.Moves }

// Proving are the edges from write holds waiting on one goroutine. A G
// embeds them; only its owner touches them. The zero value has nothing
// waiting.
type Proving struct {
	acqs   []*acquired // oldest first
	byKey  map[chain.Key]*acquired
	n      int    // the edges of acqs
	proved []Edge // see Released; reused
	// dropped are the chains of the latest acquisitions whose edges were
	// dropped unproved, in a ring: not to be cached until seen anew.
	dropped  [maxDropped]chain.Key
	nextDrop int
}

// acquired is the edges of one acquisition waiting: all of its chain key.
type acquired struct {
	key   chain.Key
	edges []Edge
}

// maxDropped bounds the chains Proving remembers dropping. A chain
// forgotten there may be cached by the proof of an acquisition's read
// edges (R12) without its edges from a write hold: a missed edge.
const maxDropped = 8

// MaxProving bounds the edges from write holds that wait on one
// goroutine, and MaxProvingAt those of one acquisition. An acquisition
// with more is not held back: its edges are added at once, as though the
// holds were proved. Past MaxProving, the oldest acquisitions' edges are
// added at once too (HoldEdges returns them). A deep nesting released in
// order needs about n²/2 at its deepest; a goroutine that takes many
// locks under a lock it never releases keeps its newest edges waiting.
const (
	MaxProving   = 4096
	MaxProvingAt = 1024
)

// HoldEdges keeps es, the edges from write holds of one acquisition (all
// with the same Key), after dropping the edges that no longer stand, the
// edges of another epoch than epoch, and any waiting for the same Key (es
// sees them anew). It reports false, keeping nothing, if es has more than
// MaxProvingAt edges. To stay within MaxProving it takes out the oldest
// acquisitions' edges and returns them, for the caller to add at once.
// It keeps es itself: the caller must not change it.
func (p *Proving) HoldEdges(es []Edge, epoch uint32) (out [][]Edge, ok bool) {
	if len(es) == 0 {
		return nil, true
	}
	key := es[0].Key
	p.sweep(epoch, key)
	p.undrop(key)
	if len(es) > MaxProvingAt {
		return nil, false
	}
	drop := 0
	for p.n+len(es) > MaxProving {
		a := p.acqs[drop]
		delete(p.byKey, a.key)
		out = append(out, a.edges)
		p.n -= len(a.edges)
		p.remember(a.key) // so that a read edge's proof does not cache it
		drop++
	}
	p.acqs = slices.Delete(p.acqs, 0, drop)
	a := &acquired{key, es}
	p.acqs = append(p.acqs, a)
	if p.byKey == nil {
		p.byKey = make(map[chain.Key]*acquired)
	}
	p.byKey[key] = a
	p.n += len(es)
	return out, true
}

// ProvingKey reports whether edges of chain key of the given epoch wait,
// all standing: the acquisition need not be recorded again. One length
// test when nothing waits.
func (p *Proving) ProvingKey(key chain.Key, epoch uint32) bool {
	if len(p.acqs) == 0 {
		return false
	}
	a := p.byKey[key]
	return a != nil && a.edges[0].Epoch == epoch && a.live()
}

// live reports whether every edge of a still stands.
func (a *acquired) live() bool {
	for i := range a.edges {
		if !a.edges[i].live() {
			return false
		}
	}
	return true
}

// WaitsOnKey reports whether an edge of chain key waits: the chain must
// not be cached yet.
func (p *Proving) WaitsOnKey(key chain.Key) bool {
	return p.byKey[key] != nil
}

// HasProving reports whether any edge waits: one load, for the release
// path.
func (p *Proving) HasProving() bool { return len(p.acqs) > 0 }

// ProvingEdges returns the number of edges waiting.
func (p *Proving) ProvingEdges() int { return p.n }

// Released is called when the goroutine itself releases a write hold of
// l that was still its own, before anything else can take l. The edges
// that waited on that hold are proved: TakeProved returns them. Edges of
// l seen under an earlier hold, and edges of another epoch, are dropped,
// with every edge of the acquisitions they belong to.
func (p *Proving) Released(l *class.Lock, epoch uint32) {
	if len(p.acqs) == 0 {
		return
	}
	p.sweep(epoch, 0)
	kept := p.acqs[:0]
	for _, a := range p.acqs {
		left := a.edges[:0]
		for _, e := range a.edges {
			if e.From == l {
				p.proved = append(p.proved, e)
			} else {
				left = append(left, e)
			}
		}
		clear(a.edges[len(left):])
		p.n -= len(a.edges) - len(left)
		if a.edges = left; len(left) > 0 {
			kept = append(kept, a)
		} else {
			delete(p.byKey, a.key)
		}
	}
	clear(p.acqs[len(kept):])
	p.acqs = kept
}

// TakeProved returns the edges Released proved. The caller calls
// DoneProved once it is done with them.
func (p *Proving) TakeProved() []Edge { return p.proved }

// DoneProved forgets the edges TakeProved returned, so that they keep no
// lock alive.
func (p *Proving) DoneProved() {
	clear(p.proved)
	p.proved = p.proved[:0]
}

// HasProved reports whether Released proved edges that TakeProved has not
// returned yet.
func (p *Proving) HasProved() bool { return len(p.proved) > 0 }

// DroppedKey reports whether the edges of chain key were dropped unproved
// lately: the chain must not be cached.
func (p *Proving) DroppedKey(key chain.Key) bool {
	return key != 0 && slices.Contains(p.dropped[:], key)
}

// sweep drops the acquisitions with an edge that no longer stands or is
// of another epoch than epoch, and the one of key (0: none), which is seen
// anew.
func (p *Proving) sweep(epoch uint32, key chain.Key) {
	kept := p.acqs[:0]
	for _, a := range p.acqs {
		switch {
		case a.key == key:
			p.n -= len(a.edges)
			delete(p.byKey, a.key)
		case a.edges[0].Epoch != epoch || !a.live():
			p.n -= len(a.edges)
			delete(p.byKey, a.key)
			p.remember(a.key)
		default:
			kept = append(kept, a)
		}
	}
	clear(p.acqs[len(kept):])
	p.acqs = kept
}

// remember records that the edges of chain key were dropped unproved.
func (p *Proving) remember(key chain.Key) {
	if !p.DroppedKey(key) {
		p.dropped[p.nextDrop] = key
		p.nextDrop = (p.nextDrop + 1) % maxDropped
	}
}

// undrop forgets that the edges of chain key were dropped: they are seen
// anew.
func (p *Proving) undrop(key chain.Key) {
	if i := slices.Index(p.dropped[:], key); i >= 0 {
		p.dropped[i] = 0
	}
}
