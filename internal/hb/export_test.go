package hb

import (
	"maps"
	"slices"
)

// ClockOf returns the clock that knows m: goroutine id's events up to
// m[id] (a zero epoch is left out).
func ClockOf(m map[int64]uint64) *Clock {
	var c Clock
	for _, id := range slices.Sorted(maps.Keys(m)) {
		if m[id] != 0 {
			c.ents = append(c.ents, ent{id, m[id]})
		}
	}
	return &c
}

// With is c.with.
func (c *Clock) With(id int64, t uint64) *Clock { return c.with(id, t) }

// Covers is c.covers.
func (c *Clock) Covers(d *Clock) bool { return c.covers(d) }

// Extends reports whether c extends flat clock r, sharing it.
func (c *Clock) Extends(r *Clock) bool { return c.base == r }

// Compared returns how many pairs of tracks Ordered compared one by one.
func Compared() int64 { return compared.Load() }
