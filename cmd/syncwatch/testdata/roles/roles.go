// Package roles has one lock-order bug and one shape that only looks like
// one.
package roles

import "sync"

// Store's Put takes mu then idx, Reindex idx then mu: a Store used by
// both at once deadlocks, though each test uses its own Store.
type Store struct {
	mu, idx sync.Mutex
	n       int
}

func (s *Store) Put() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idx.Lock()
	defer s.idx.Unlock()
	s.n++
}

func (s *Store) Reindex() {
	s.idx.Lock()
	defer s.idx.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n--
}

// A tree whose levels alternate two types: each node reports to its
// parent under its own lock. An Outer's lock is taken before an Inner's
// at one level and after it at the next, but never one lock before
// another in both orders: no deadlock.
type Outer struct {
	mu     sync.Mutex
	parent *Inner
	n      int
}

type Inner struct {
	mu     sync.Mutex
	parent *Outer
	n      int
}

func (o *Outer) Report() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n++
	if o.parent != nil {
		o.parent.Report()
	}
}

func (i *Inner) Report() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.n++
	if i.parent != nil {
		i.parent.Report()
	}
}
