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
	seen    map[string]struct{}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = make(map[string]struct{})
	}
	if _, dup := s.seen[key]; dup {
		return false
	}
	max := s.max
	if max == 0 {
		max = DefaultMax
	}
	if len(s.seen) < 10*max {
		s.seen[key] = struct{}{}
	}
	if number != nil {
		number(&v)
	}
	if len(s.recs) >= max {
		s.dropped++
		return true
	}
	s.recs = append(s.recs, v)
	return true
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
	s.seen, s.recs, s.dropped = nil, nil, 0
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
