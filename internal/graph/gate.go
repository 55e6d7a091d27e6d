package graph

import (
	"slices"
	"strings"
)

// A Gate is a set of nodes: the locks held for writing when an edge was
// seen, other than the edge's own two (see [Observation]). The zero Gate
// is empty.
//
// A goroutine holding k locks that takes a new one records k edges, and
// their gates are one set, the locks it holds, each less the edge's From.
// So a Gate is a sorted list of ids shared by those edges and never
// written, less at most one of them: the k gates of one acquisition cost
// one list, not k lists of k ids, and nesting n locks deep records its
// O(n²) edges in O(n²) time and memory rather than O(n³).
type Gate struct {
	ids  []NodeID // sorted, without duplicates; shared, never written
	skip int      // 1 + the index in ids of the id left out; 0 if none
}

// NewGate returns the gate holding ids. It sorts ids and removes
// duplicates in place; the Gate and every Gate made from it with Without
// then share ids, which the caller must not change any more.
func NewGate(ids []NodeID) Gate {
	slices.Sort(ids)
	return Gate{ids: slices.Compact(ids)}
}

// Len returns the number of ids in g.
func (g Gate) Len() int {
	if g.skip != 0 {
		return len(g.ids) - 1
	}
	return len(g.ids)
}

// Has reports whether id is in g.
func (g Gate) Has(id NodeID) bool {
	i, ok := slices.BinarySearch(g.ids, id)
	return ok && g.skip != i+1
}

// Without returns g less id. It shares g's list, unless g already leaves
// out another id.
func (g Gate) Without(id NodeID) Gate {
	i, ok := slices.BinarySearch(g.ids, id)
	if !ok || g.skip == i+1 {
		return g
	}
	if g.skip == 0 {
		return Gate{ids: g.ids, skip: i + 1}
	}
	ids := make([]NodeID, 0, len(g.ids)-2)
	for j, x := range g.ids {
		if j != i && j+1 != g.skip {
			ids = append(ids, x)
		}
	}
	return Gate{ids: ids}
}

// IDs returns the ids in g, sorted, in a new slice.
func (g Gate) IDs() []NodeID {
	out := make([]NodeID, 0, g.Len())
	for i, id := range g.ids {
		if i+1 != g.skip {
			out = append(out, id)
		}
	}
	return out
}

// Intersect returns the ids of g that are also in o. When o holds every
// id of g, which is what a merge of two sightings of one edge finds most
// often, it returns g itself and allocates nothing.
func (g Gate) Intersect(o Gate) Gate {
	switch {
	case g.Len() == 0:
		return g
	case o.Len() == 0:
		return Gate{}
	case sameList(g, o):
		if o.skip == 0 || o.skip == g.skip {
			return g
		}
		if g.skip == 0 {
			return o
		}
	}
	first := -1 // the index in g.ids of the first id missing from o
	for i, id := range g.ids {
		if i+1 != g.skip && !o.Has(id) {
			first = i
			break
		}
	}
	if first < 0 {
		return g
	}
	var ids []NodeID
	for i, id := range g.ids {
		if i+1 != g.skip && i != first && (i < first || o.Has(id)) {
			ids = append(ids, id)
		}
	}
	return Gate{ids: ids}
}

// IntersectEither returns the ids of g that are in a or in b: g itself,
// allocating nothing, when every id of g is. It is g.Intersect(a.Union(b))
// without building the union.
func (g Gate) IntersectEither(a, b Gate) Gate {
	first := -1 // the index in g.ids of the first id in neither
	for i, id := range g.ids {
		if i+1 != g.skip && !a.Has(id) && !b.Has(id) {
			first = i
			break
		}
	}
	if first < 0 {
		return g
	}
	var ids []NodeID
	for i, id := range g.ids {
		if i+1 != g.skip && i != first && (i < first || a.Has(id) || b.Has(id)) {
			ids = append(ids, id)
		}
	}
	return Gate{ids: ids}
}

// Union returns the ids in g or in o, in a new list unless one of them is
// empty.
func (g Gate) Union(o Gate) Gate {
	switch {
	case o.Len() == 0:
		return g
	case g.Len() == 0:
		return o
	}
	return NewGate(append(g.IDs(), o.IDs()...))
}

// With returns the ids in g or in o: g itself when it holds every id of
// o, which along a search path is the common case.
func (g Gate) With(o Gate) Gate {
	if o.Len() == 0 || o.within(g) {
		return g
	}
	return g.Union(o)
}

// within reports whether every id of g is in o.
func (g Gate) within(o Gate) bool {
	for i, id := range g.ids {
		if i+1 != g.skip && !o.Has(id) {
			return false
		}
	}
	return true
}

// Meets reports whether g and o have an id in common.
func (g Gate) Meets(o Gate) bool {
	if g.Len() > o.Len() {
		g, o = o, g
	}
	for i, id := range g.ids {
		if i+1 != g.skip && o.Has(id) {
			return true
		}
	}
	return false
}

// listMemo remembers the intersection of two gate lists.
type listMemo struct{ a, b, both []NodeID }

// intersect is a.Intersect(b) for merging b into an edge whose gate is a.
//
// The k edges recorded for one acquisition share their gates' list, and
// when that acquisition is seen again in another chain (under one more
// lock, say), its k edges are merged with k new gates that share one list
// too. So the intersection of the two lists is computed once, remembered,
// and each edge's gate is that list less an id or two: merging the k edges
// costs O(k), not O(k²), and the narrowed gates still share one list.
func (g *Graph) intersect(a, b Gate) Gate {
	if a.Len() == 0 || b.Len() == 0 || sameList(a, b) {
		return a.Intersect(b)
	}
	r := Gate{ids: g.bothLists(a.ids, b.ids)}
	if a.skip != 0 {
		r = r.Without(a.ids[a.skip-1])
	}
	if b.skip != 0 {
		r = r.Without(b.ids[b.skip-1])
	}
	if r.Len() == a.Len() {
		return a // r is within a: the same set, and a's list is shared already
	}
	return r
}

// bothLists returns the ids in both sorted lists a and b: a itself if b
// holds all of a. Recent answers are remembered.
func (g *Graph) bothLists(a, b []NodeID) []NodeID {
	for i := range g.lists {
		if m := &g.lists[i]; same(m.a, a) && same(m.b, b) {
			return m.both
		}
	}
	var both []NodeID
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			both = append(both, a[i])
			i, j = i+1, j+1
		}
	}
	if len(both) == len(a) {
		both = a
	}
	g.lists[g.nextList] = listMemo{a, b, both}
	g.nextList = (g.nextList + 1) % len(g.lists)
	return both
}

// same reports whether a and b are one list.
func same(a, b []NodeID) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameList reports whether g and o leave ids out of one shared list.
func sameList(g, o Gate) bool {
	return len(g.ids) > 0 && same(g.ids, o.ids)
}

// key returns a string that is the same for equal gates, for maps.
func (g Gate) key() string {
	if g.Len() == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(8 * g.Len())
	for i, id := range g.ids {
		if i+1 == g.skip {
			continue
		}
		for s := 0; s < 64; s += 8 {
			b.WriteByte(byte(id >> s))
		}
	}
	return b.String()
}
