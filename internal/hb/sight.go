package hb

import (
	"cmp"
	"slices"
	"sync/atomic"
)

// MaxSighters bounds the goroutines a Sight keeps: an edge taken by more
// is of so many goroutines that no order between them is kept. It is
// internal/chain's MaxOwners less one, so that the sighting that makes a
// chain everyone's (chain.Many) makes its edges' Sights unknown.
const MaxSighters = 255

// maxSeen bounds the sightings a Sight keeps of one goroutine: past it
// the two oldest are kept as one, as late as the later and knowing what
// the earlier knew, which orders less.
const maxSeen = 32

// A Sight is what is known of the sightings of one order edge: for each
// goroutine that made some, the epochs at which they were recorded, each
// with what the goroutine knew when it took the edge's From for it. The
// zero Sight is unknown: any goroutine may have made sightings that are
// not known, and it orders nothing.
type Sight struct{ s *sighters }

type sighters struct{ tracks []track } // by their goroutines' Serials

// track is one goroutine's recorded sightings of the edge, oldest first.
// The goroutine's first sighting of an edge is always recorded (the chain
// cache names who recorded each chain); later ones at the same epoch, or
// at an epoch at which its sightings of the edge were not watched, may
// not be (see G.Watch).
type track struct {
	g    *G
	seen []seen
}

type seen struct {
	epoch uint64
	clock *Clock
}

// Known reports whether s knows every goroutine that made a sighting.
func (s Sight) Known() bool { return s.s != nil }

// Sighting returns the Sight of one sighting by g, now, of an edge from
// its hold at stack position i.
func (g *G) Sighting(i int) Sight {
	return Sight{&sighters{tracks: []track{{g: g, seen: []seen{{g.Epoch(), g.KnownAt(i)}}}}}}
}

// Merge folds o, other sightings of s's edge, into s, and reports whether
// s can now order less than it did: a goroutine that was not known made
// some, or a known one made some later. A Sight that Merge changes must
// be s's own, not one shared with another Sight.
func (s *Sight) Merge(o Sight) bool {
	if s.s == nil {
		return false
	}
	if o.s == nil {
		s.s = nil
		return true
	}
	changed := false
	for _, ot := range o.s.tracks {
		i, found := s.s.find(ot.g)
		if !found {
			if len(s.s.tracks) == MaxSighters {
				s.s = nil
				return true
			}
			s.s.tracks = slices.Insert(s.s.tracks, i, track{g: ot.g})
		}
		t := &s.s.tracks[i]
		for _, x := range ot.seen {
			if n := len(t.seen); n > 0 && x.epoch <= t.seen[n-1].epoch {
				continue // no later than a sighting known
			}
			if len(t.seen) == maxSeen {
				t.seen[1].clock = t.seen[0].clock
				t.seen = append(t.seen[:0], t.seen[1:]...)
			}
			t.seen, changed = append(t.seen, x), true
		}
	}
	return changed
}

// find returns the position of g's track, or where it goes: tracks are
// in the order of their goroutines' Serials.
func (s *sighters) find(g *G) (int, bool) {
	return slices.BinarySearchFunc(s.tracks, g.Serial, func(t track, serial uint64) int {
		return cmp.Compare(t.g.Serial, serial)
	})
}

// Ordered reports whether no sighting of a's edge, into graph node aTo,
// can be pending while one of b's, into bTo, is: each sighting of one is
// of another goroutine than each of the other's, and happened before it
// or after it. It may watch a goroutine (see G.Watch). Called under the
// engine's lock.
func Ordered(a Sight, aTo uint64, b Sight, bTo uint64) bool {
	if a.s == nil || b.s == nil {
		return false
	}
	for _, x := range a.s.tracks {
		for _, y := range b.s.tracks {
			if x.g.ID == y.g.ID {
				return false
			}
		}
	}
	// First as if every sighting were recorded, which orders at least as
	// much as the truth: only if that orders them are the goroutines
	// watched, for what they may have done unrecorded.
	xs, ys := make([]spans, len(a.s.tracks)), make([]spans, len(b.s.tracks))
	for _, watch := range []bool{false, true} {
		for i, x := range a.s.tracks {
			xs[i] = x.spans(aTo, watch)
		}
		for j, y := range b.s.tracks {
			ys[j] = y.spans(bTo, watch)
		}
		// The common case first: every sighting of one edge knew every
		// one of the other's (a pool waited for, then another started),
		// in time linear in the goroutines, where the pairs are their
		// square: a pool of 255 re-sighting a held-back edge searched it
		// at 7 ms an acquisition, under the engine's lock.
		if knowsAll(ys, xs) || knowsAll(xs, ys) {
			continue
		}
		for _, x := range xs {
			for _, y := range ys {
				compared.Add(1)
				if !x.apart(y) {
					return false
				}
			}
		}
	}
	return true
}

// compared counts the pairs of tracks Ordered compared one by one.
var compared atomic.Int64

// knowsAll reports whether each span of ys knew, when its goroutine took
// its edge's From, each span of xs up to its last epoch: then every pair
// is apart. Clocks extending one root are looked at once for what the
// root knows (an extension knows at least what its root does).
func knowsAll(ys, xs []spans) bool {
	need := map[int64]uint64{}
	for _, t := range xs {
		for _, x := range t {
			need[x.id] = max(need[x.id], x.last)
		}
	}
	memo := map[*Clock]bool{}
	knows := func(c *Clock) bool {
		k, ok := memo[c]
		if !ok {
			k = true
			for id, last := range need {
				if c.At(id) < last {
					k = false
					break
				}
			}
			memo[c] = k
		}
		return k
	}
	for _, t := range ys {
		for _, y := range t {
			if c := y.clock; c == nil || !knows(c.root()) && !knows(c) {
				if len(need) > 0 {
					return false
				}
			}
		}
	}
	return true
}

// A span stands for a goroutine's sightings of an edge at epochs from to
// last: each of them knew at least what clock says when it took the
// edge's From.
type span struct {
	id    int64
	last  uint64
	clock *Clock
}

type spans []span

// spans returns t's sightings as spans: each recorded sighting, and after
// it, up to the next, those the goroutine may have made unrecorded at its
// own epochs up to its watch of node (if watch is set; none if not),
// which knew at least what it knew. A goroutine's epochs follow each
// other (see tick): between two recorded at e and e+1 it had none.
func (t track) spans(node uint64, watch bool) spans {
	var w uint64
	if watch {
		w = t.g.Watch(node)
	}
	out := make(spans, len(t.seen))
	for i, x := range t.seen {
		last := max(x.epoch, w)
		if i+1 < len(t.seen) {
			last = max(x.epoch, min(w, t.seen[i+1].epoch-1))
		}
		out[i] = span{id: t.g.ID, last: last, clock: x.clock}
	}
	return out
}

// apart reports whether every span of xs and every span of ys are
// ordered: one's goroutine, when it took its From for each sighting of
// its span, knew the other's up to the last epoch of the other's span.
// The one whose every attempt happened before went past each (it got the
// lock) before it released what the other learnt, so it was not waiting
// when the other took its From; and the other's later sightings come
// after its first.
func (xs spans) apart(ys spans) bool {
	for _, x := range xs {
		for _, y := range ys {
			if y.clock.At(x.id) < x.last && x.clock.At(y.id) < y.last {
				return false
			}
		}
	}
	return true
}
