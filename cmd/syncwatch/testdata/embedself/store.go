// Package embedself serves its own source: store.go is embedded by its
// test, which compares the copy with the file.
package embedself

import "sync"

// Store counts under a lock declared here.
type Store struct {
	mu sync.Mutex
	n  int
}

// Add adds one, under s's lock and the lock it is given.
func (s *Store) Add(outer *sync.Mutex) {
	outer.Lock()
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	outer.Unlock()
}
