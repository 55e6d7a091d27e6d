// Package report is the store behind every syncwatch report: it keeps each
// distinct violation once, bounds how many it keeps, and never calls out
// while its lock is held. Delivery to handlers and telemetry happens in the
// caller, after Add returns.
package report

import (
	"sync"
	"sync/atomic"
)

// DefaultMax is how many distinct records a Store keeps.
const DefaultMax = 10000

// Store keeps distinct records. The zero Store is ready to use.
type Store[V any] struct {
	mu      sync.Mutex
	seen    map[string]int // key -> index in recs, -1 if not kept
	occs    map[string]struct{}
	recs    []V
	dropped int
	max     int
}

// Add records v under key. It reports false, keeping nothing, if a record
// with the same key was added before (since the last Reset). Past the bound,
// new records are counted in Dropped instead of kept; their keys still
// deduplicate, up to ten times the bound.
//
// If number is not nil it is called, under the store's lock, on the record
// about to be kept, so that records can be numbered in the order kept.
func (s *Store[V]) Add(key string, v V, number func(*V)) bool {
	return s.AddGrouped(key, "", v, number, nil)
}

// AddGrouped is Add for a record that groups occurrences: occ identifies
// this one among those of key ("" if it cannot be told from others). An
// occurrence seen before is dropped. A new occurrence of a key added
// before is passed to merge (if not nil) with the kept record, under the
// store's lock, so that the record counts it; AddGrouped then reports
// false. Occurrences, like keys, are remembered up to ten times the
// bound: past it a repeated one counts again.
func (s *Store[V]) AddGrouped(key, occ string, v V, number, merge func(kept *V)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = make(map[string]int)
		s.occs = make(map[string]struct{})
	}
	max := s.max
	if max == 0 {
		max = DefaultMax
	}
	if occ != "" {
		if _, dup := s.occs[occ]; dup {
			return false
		}
		if len(s.occs) < 10*max {
			s.occs[occ] = struct{}{}
		}
	}
	if i, dup := s.seen[key]; dup {
		if i >= 0 && merge != nil {
			merge(&s.recs[i])
		}
		return false
	}
	i := -1
	if len(s.recs) < max {
		i = len(s.recs)
	}
	if len(s.seen) < 10*max {
		s.seen[key] = i
	}
	if number != nil {
		number(&v)
	}
	if i < 0 {
		s.dropped++
		return true
	}
	s.recs = append(s.recs, v)
	return true
}

// Seen reports whether a record was added under key (since the last
// Reset), kept or not.
func (s *Store[V]) Seen(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seen[key]
	return ok
}

// All returns a copy of the records, oldest first.
func (s *Store[V]) All() []V {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]V, len(s.recs))
	copy(out, s.recs)
	return out
}

// Dropped returns how many distinct records were not kept.
func (s *Store[V]) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Reset forgets every record and key.
func (s *Store[V]) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen, s.occs, s.recs, s.dropped = nil, nil, nil, 0
}

// SetMax bounds the records kept.
func (s *Store[V]) SetMax(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.max = n
}

// harness is set while a test harness (lockordertest.VerifyTestMain) will
// print every report that counts in full when the tests end: then the
// default handler prints one line per report, so that each is printed in
// full once.
var harness atomic.Bool

// SetHarness says whether a test harness prints the reports.
func SetHarness(on bool) { harness.Store(on) }

// Harness reports whether a test harness prints the reports.
func Harness() bool { return harness.Load() }
