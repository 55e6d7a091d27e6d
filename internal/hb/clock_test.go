package hb_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/syncwatch/syncwatch/internal/hb"
)

// ids are drawn from 1 to idRange.
const idRange = 3 * hb.MaxEntries

// named returns what c names, by At.
func named(c *hb.Clock) map[int64]uint64 {
	m := make(map[int64]uint64)
	for id := int64(1); id <= idRange; id++ {
		if t := c.At(id); t != 0 {
			m[id] = t
		}
	}
	return m
}

// checkKept fails unless got is what want keeps under the bound: each id
// it names is want's at want's epoch, and it names want's largest
// MaxEntries ids, or must (if not 0) and the largest MaxEntries-1. It names no more than a clock may.
func checkKept(t *testing.T, what string, c *hb.Clock, want map[int64]uint64, must int64) {
	t.Helper()
	got := named(c)
	if c.Len() != len(got) {
		t.Fatalf("%s: Len is %d, names %d", what, c.Len(), len(got))
	}
	if len(got) > hb.MaxEntries+hb.MaxDelta {
		t.Fatalf("%s: names %d goroutines, past the bound", what, len(got))
	}
	for id, e := range got {
		if want[id] != e {
			t.Fatalf("%s: names %d at %d, want %d", what, id, e, want[id])
		}
	}
	n := hb.MaxEntries
	if must != 0 {
		n-- // must, and one fewer of the others
	}
	ids := slices.Sorted(maps.Keys(want))
	for _, id := range ids[max(0, len(ids)-n):] {
		if got[id] == 0 {
			t.Fatalf("%s: forgot %d, one of the %d newest of %d", what, id, n, len(ids))
		}
	}
	if must != 0 && got[must] != want[must] {
		t.Fatalf("%s: forgot %d, which it must name", what, must)
	}
}

// The clock operations against maps of epochs, on clocks made by random
// forks (with) and joins, flat and extending a shared one, around the
// bound: Join knows what both name, forgetting only past the newest
// MaxEntries; with names the id it adds; covers is "knows every entry at
// least as late"; a join that one side covers is that side.
func TestClockOperationsAgainstAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() *hb.Clock {
		m := make(map[int64]uint64)
		for range rng.IntN(2 * hb.MaxEntries) {
			m[rng.Int64N(idRange)+1] = rng.Uint64N(4) + 1
		}
		// As a clock is: its newest MaxEntries at most, often full.
		ids := slices.Sorted(maps.Keys(m))
		for _, id := range ids[:max(0, len(ids)-hb.MaxEntries)] {
			delete(m, id)
		}
		return hb.ClockOf(m)
	}
	pool := []*hb.Clock{nil, random(), random()}
	pick := func() *hb.Clock { return pool[rng.IntN(len(pool))] }
	for i := range 20000 {
		var c *hb.Clock
		switch rng.IntN(8) {
		case 0:
			c = random()
		case 1, 2, 3, 4:
			a := pick()
			id, e := rng.Int64N(idRange)+1, rng.Uint64N(6)+1
			// Mostly newer ids, as a fork's are, and the oldest, as a
			// long-lived parent's is.
			switch rng.IntN(4) {
			case 0, 1:
				id = idRange - rng.Int64N(hb.MaxDelta*2)
			case 2:
				id = rng.Int64N(hb.MaxDelta) + 1
			}
			want := named(a)
			want[id] = max(want[id], e)
			c = a.With(id, e)
			checkKept(t, "with", c, want, id)
		default:
			a, b := pick(), pick()
			ma, mb := named(a), named(b)
			want := maps.Clone(ma)
			for id, e := range mb {
				want[id] = max(want[id], e)
			}
			covers := true
			for id, e := range mb {
				covers = covers && ma[id] >= e
			}
			if a.Covers(b) != covers {
				t.Fatalf("%d: covers = %v, want %v", i, !covers, covers)
			}
			if rng.IntN(2) == 0 {
				c = hb.Join(a, b)
				if covers && c != a {
					t.Fatalf("%d: a join of a clock that covers the other is a new clock", i)
				}
				checkKept(t, "join", c, want, 0)
			} else {
				c = hb.Acquired(a, b)
				checkKept(t, "acquired", c, want, 0)
			}
		}
		if len(pool) < 40 {
			pool = append(pool, c)
		} else {
			pool[rng.IntN(len(pool))] = c
		}
	}
}

// Goroutines forked from one, and the joins of their forks, extend its
// clock: a fork and a join copy what they add, not what it knows.
func TestForksShareTheirParentsClock(t *testing.T) {
	parent := make(map[int64]uint64)
	for id := int64(1); id <= hb.MaxEntries; id++ {
		parent[id] = 3
	}
	p := hb.ClockOf(parent)
	joined := (*hb.Clock)(nil)
	for id := int64(hb.MaxEntries + 1); id <= hb.MaxEntries+4; id++ {
		fork := p.With(id, 1)
		if !fork.Extends(p) {
			t.Fatalf("fork of %d copied its parent's clock", id)
		}
		joined = hb.Join(joined, fork)
	}
	if !joined.Extends(p) {
		t.Fatal("the join of sibling forks copied their parent's clock")
	}
	if joined.Len() != hb.MaxEntries+4 {
		t.Fatalf("the join names %d, want %d", joined.Len(), hb.MaxEntries+4)
	}
}
