// Package hang writes and flushes a store, taking its two locks in
// opposite orders: two goroutines doing both at once deadlock.
package hang

import "sync"

// Store has a data lock and a log lock.
type Store struct {
	mu  sync.Mutex
	log sync.Mutex
}

// Write takes mu, then log, once ready is closed and other is.
func (s *Store) Write(ready, other chan struct{}) {
	s.mu.Lock()
	close(ready)
	<-other
	s.log.Lock()
	s.log.Unlock()
	s.mu.Unlock()
}

// Flush takes log, then mu.
func (s *Store) Flush(ready, other chan struct{}) {
	s.log.Lock()
	close(ready)
	<-other
	s.mu.Lock()
	s.mu.Unlock()
	s.log.Unlock()
}
