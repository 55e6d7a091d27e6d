package hb

// MaxSighters bounds the goroutines a Sight keeps: an edge taken by more
// is of so many goroutines that no order between them is kept. It is
// internal/chain's MaxOwners less one, so that the sighting that makes a
// chain everyone's (chain.Many) makes its edges' Sights unknown.
const MaxSighters = 15

// A Sight is what is known of the sightings of one order edge: for each
// goroutine that made some, the last epoch at which one was recorded, and
// what the goroutine knew when it took the edge's From for its first.
// The zero Sight is unknown: any goroutine may have made sightings that
// are not known, and it orders nothing.
type Sight struct{ s *sighters }

type sighters struct{ ents []sighting }

type sighting struct {
	g     *G
	epoch uint64
	clock *Clock
}

// Known reports whether s knows every goroutine that made a sighting.
func (s Sight) Known() bool { return s.s != nil }

// Sighting returns the Sight of one sighting by g, now, of an edge from
// its hold at stack position i.
func (g *G) Sighting(i int) Sight {
	return Sight{&sighters{ents: []sighting{{g: g, epoch: g.Epoch(), clock: g.KnownAt(i)}}}}
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
	for _, x := range o.s.ents {
		i := s.s.find(x.g)
		switch {
		case i >= 0:
			if x.epoch > s.s.ents[i].epoch {
				s.s.ents[i].epoch, changed = x.epoch, true
			}
		case len(s.s.ents) == MaxSighters:
			s.s = nil
			return true
		default:
			s.s.ents, changed = append(s.s.ents, x), true
		}
	}
	return changed
}

func (s *sighters) find(g *G) int {
	for i := range s.ents {
		if s.ents[i].g == g {
			return i
		}
	}
	return -1
}

// Ordered reports whether every sighting of a's edge happened before
// every sighting of b's, or every one after: the two edges cannot be
// pending at once. It may watch a goroutine (see G.Watch). Called under
// the engine's lock.
func Ordered(a, b Sight) bool { return before(a, b) || before(b, a) }

// before reports whether every sighting of a's edge happened before every
// sighting of b's, so that no run has a goroutine waiting for a's To while
// another holds it as b's From. No goroutine made sightings of both. Each
// goroutine of b's, when it took b's From for its first sighting, knew
// each goroutine of a's up to an epoch at or after every attempt of a's
// edge: that goroutine went past each attempt (it got the lock) before it
// released what b's learnt, so it was not waiting when b's took the From;
// b's later sightings come after its first. The attempts of a goroutine
// of a's are those recorded (epoch), and those it may have made at an
// epoch that was not watched: from Watch on, each epoch's first sighting
// of an edge is recorded, and raises epoch.
func before(a, b Sight) bool {
	if a.s == nil || b.s == nil {
		return false
	}
	for _, x := range a.s.ents {
		for _, y := range b.s.ents {
			if x.g.ID == y.g.ID {
				return false
			}
			if t := y.clock.At(x.g.ID); t == 0 || t < x.epoch {
				return false
			}
		}
	}
	// Every pair is ordered by what is recorded: watch the goroutines of
	// a's, so that what they do from now on is recorded too, and check
	// what they may have done unrecorded.
	for _, x := range a.s.ents {
		w := x.g.Watch()
		for _, y := range b.s.ents {
			if y.clock.At(x.g.ID) < w {
				return false
			}
		}
	}
	return true
}
