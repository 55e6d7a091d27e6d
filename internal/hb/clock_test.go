package hb_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/syncwatch/syncwatch/internal/hb"
)

// The clock operations against a map of epochs, on random clocks around
// the bound: Join keeps the largest MaxEntries ids at their later
// epochs; with keeps the id it adds and the largest others; covers is
// "knows every entry at least as late".
func TestClockOperationsAgainstAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() map[int64]uint64 {
		m := make(map[int64]uint64)
		for range rng.IntN(hb.MaxEntries + 8) {
			m[rng.Int64N(3*hb.MaxEntries)+1] = rng.Uint64N(4) + 1
		}
		return m
	}
	// keep returns m with only its largest n ids, and the one it must
	// keep (0: none).
	keep := func(m map[int64]uint64, n int, must int64) map[int64]uint64 {
		ids := slices.Sorted(maps.Keys(m))
		out := make(map[int64]uint64)
		if must != 0 {
			out[must], n = m[must], n-1
			ids = slices.DeleteFunc(ids, func(id int64) bool { return id == must })
		}
		for _, id := range ids[max(0, len(ids)-n):] {
			out[id] = m[id]
		}
		return out
	}
	same := func(c *hb.Clock, m map[int64]uint64) bool {
		if c.Len() != len(m) {
			return false
		}
		for id, e := range m {
			if c.At(id) != e {
				return false
			}
		}
		return true
	}
	for i := range 5000 {
		ma, mb := random(), random()
		a, b := hb.ClockOf(ma), hb.ClockOf(mb)
		union := maps.Clone(ma)
		for id, e := range mb {
			union[id] = max(union[id], e)
		}
		if j := hb.Join(a, b); !same(j, keep(union, hb.MaxEntries, 0)) {
			t.Fatalf("%d: Join(%v, %v) is wrong", i, ma, mb)
		}
		covers := true
		for id, e := range mb {
			covers = covers && ma[id] >= e
		}
		if a.Covers(b) != covers {
			t.Fatalf("%d: covers(%v, %v) = %v", i, ma, mb, !covers)
		}
		id, e := rng.Int64N(3*hb.MaxEntries)+1, rng.Uint64N(4)+1
		with := maps.Clone(ma)
		with[id] = max(with[id], e)
		if w := a.With(id, e); !same(w, keep(with, hb.MaxEntries, id)) {
			t.Fatalf("%d: %v with %d at %d is wrong", i, ma, id, e)
		}
	}
}
