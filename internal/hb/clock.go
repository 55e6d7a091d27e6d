package hb

import (
	"cmp"
	"slices"
)

// MaxEntries bounds a Clock. Past it the entries of the oldest goroutines
// (the smallest ids) are dropped: what a clock forgets orders nothing, so
// a cycle it would have held back is reported. A goroutine that waited
// for a pool of up to MaxSighters workers, and forks to a second,
// names each of them and itself. A clock that extends another (see
// Clock) names up to MaxDelta more.
const MaxEntries = MaxSighters + 1

// MaxDelta bounds the entries a Clock adds to the flat clock it extends:
// past it the two are made one flat clock, of at most MaxEntries.
const MaxDelta = 16

// A Clock says, for each goroutine it names, the last epoch of that
// goroutine known to have happened before: its events at that epoch or
// earlier. A Clock is immutable once made; nil is the empty clock.
//
// A clock is flat (it names its entries) or extends a flat clock, its
// base, with up to MaxDelta entries, each later than the base's. The
// goroutines one goroutine forks, and the groups it waits for them
// through, extend its clock instead of copying it: a goroutine that has
// waited for many pools knows MaxEntries goroutines, and a copy of them
// at each Go, Done and Wait would be most of their cost (R21).
type Clock struct {
	base *Clock // nil, or the flat clock this one extends
	ents []ent  // by id; with a base, each later than the base's
}

type ent struct {
	id int64
	t  uint64
}

func byID(e ent, id int64) int { return cmp.Compare(e.id, id) }

// at returns id's epoch in es, 0 if none.
func at(es []ent, id int64) uint64 {
	if i, ok := slices.BinarySearchFunc(es, id, byID); ok {
		return es[i].t
	}
	return 0
}

// At returns the last epoch of goroutine id that c knows, 0 if none.
func (c *Clock) At(id int64) uint64 {
	if c == nil {
		return 0
	}
	if t := at(c.ents, id); t != 0 || c.base == nil {
		return t
	}
	return at(c.base.ents, id)
}

// Len returns the number of goroutines c names.
func (c *Clock) Len() int {
	switch {
	case c == nil:
		return 0
	case c.base == nil:
		return len(c.ents)
	}
	n := len(c.base.ents)
	for _, e := range c.ents {
		if at(c.base.ents, e.id) == 0 {
			n++
		}
	}
	return n
}

// empty reports whether c knows nothing.
func (c *Clock) empty() bool { return c == nil || c.base == nil && len(c.ents) == 0 }

// root returns the flat clock c is or extends.
func (c *Clock) root() *Clock {
	if c.base != nil {
		return c.base
	}
	return c
}

// delta returns what c adds to its root.
func (c *Clock) delta() []ent {
	if c.base != nil {
		return c.ents
	}
	return nil
}

// all returns every entry c names, in id order.
func (c *Clock) all() []ent {
	if c.base == nil {
		return c.ents
	}
	return union(c.base.ents, c.ents)
}

// covers reports whether c knows everything d does.
func (c *Clock) covers(d *Clock) bool {
	switch {
	case d == nil || c == d:
		return true
	case c == nil:
		return false
	}
	if r := d.root(); r == c || r == c.base {
		// c knows d's root: only what d adds is in question.
		for _, e := range d.delta() {
			if c.At(e.id) < e.t {
				return false
			}
		}
		return true
	}
	if c.base == nil && d.base == nil {
		return flatCovers(c.ents, d.ents)
	}
	if d.base != nil {
		for _, e := range d.base.ents {
			if c.At(e.id) < e.t {
				return false
			}
		}
	}
	for _, e := range d.ents {
		if c.At(e.id) < e.t {
			return false
		}
	}
	return true
}

// flatCovers reports whether cs knows every entry of ds at least as late.
func flatCovers(cs, ds []ent) bool {
	if len(cs) < len(ds) {
		return false
	}
	// One walk over both, in id order: ds' every entry must be in cs,
	// and no later there.
	i := 0
	for _, e := range ds {
		for i < len(cs) && cs[i].id < e.id {
			i++
		}
		if i == len(cs) || cs[i].id != e.id || cs[i].t < e.t {
			return false
		}
	}
	return true
}

// Join returns the clock that knows what a and b know: a or b itself
// when one covers the other, or a new clock.
func Join(a, b *Clock) *Clock {
	switch {
	case a.covers(b):
		return a
	case b.covers(a):
		return b
	}
	ra, rb := a.root(), b.root()
	switch {
	case ra == rb:
		return extend(ra, union(a.delta(), b.delta()), 0)
	case ra.covers(rb):
		// One flat clock knows the other's: a pool's group clock, made
		// flat from a root its workers' forks still extend.
		return extend(ra, union(a.delta(), later(b.delta(), ra)), 0)
	case rb.covers(ra):
		return extend(rb, union(later(a.delta(), rb), b.delta()), 0)
	}
	return flat(union(a.all(), b.all()), 0)
}

// later returns the entries of d later than flat clock r's.
func later(d []ent, r *Clock) []ent {
	out := make([]ent, 0, len(d))
	for _, e := range d {
		if at(r.ents, e.id) < e.t {
			out = append(out, e)
		}
	}
	return out
}

// Acquired returns what a goroutine that knew known knows once it has
// acquired c: their Join, made flat if it adds more than half of
// MaxDelta to its root, so that each goroutine it forks, adding itself,
// extends the same root (a pool's workers would otherwise each copy it
// when the last of them adds one entry too many).
func Acquired(known, c *Clock) *Clock {
	j := Join(known, c)
	if j != nil && j.base != nil && len(j.ents) > MaxDelta/2 {
		return flat(j.all(), 0)
	}
	return j
}

// with returns c knowing also goroutine id's events up to epoch t. It
// names id, whatever it forgets.
func (c *Clock) with(id int64, t uint64) *Clock {
	if c.At(id) >= t {
		return c
	}
	e := []ent{{id, t}}
	switch {
	case c == nil:
		return &Clock{ents: e}
	case c.base == nil && len(c.ents) < MaxDelta:
		return &Clock{ents: union(c.ents, e)} // small: a copy costs no more
	}
	return extend(c.root(), union(c.delta(), e), id)
}

// extend returns the clock that knows what flat clock r knows and d,
// whose entries are later than r's; one flat clock, naming must (if not
// 0), when d is more than MaxDelta.
func extend(r *Clock, d []ent, must int64) *Clock {
	if len(d) <= MaxDelta {
		return &Clock{base: r, ents: d}
	}
	return flat(union(r.ents, d), must)
}

// flat returns the flat clock of es, in id order: past MaxEntries only
// must (if not 0) and the largest ids are kept.
func flat(es []ent, must int64) *Clock {
	skip := len(es) - MaxEntries
	if skip <= 0 {
		return &Clock{ents: es}
	}
	i, found := slices.BinarySearchFunc(es, must, byID)
	if must == 0 || !found || i >= skip {
		return &Clock{ents: slices.Clone(es[skip:])}
	}
	// must is among the oldest: keep it, and one fewer of the others.
	out := make([]ent, 0, MaxEntries)
	out = append(out, es[i])
	return &Clock{ents: append(out, es[skip+1:]...)}
}

// union returns the entries of a and b, in id order, each id at its
// later epoch, in a new slice.
func union(a, b []ent) []ent {
	out := make([]ent, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].id < b[j].id:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].id < a[i].id:
			out = append(out, b[j])
			j++
		default:
			out = append(out, ent{a[i].id, max(a[i].t, b[j].t)})
			i++
			j++
		}
	}
	return out
}
