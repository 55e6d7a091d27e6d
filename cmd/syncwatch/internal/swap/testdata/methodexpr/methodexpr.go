package methodexpr

import "sync"

// Store's lock is locked through method expressions: it stays sync, and
// so do they.
type Store struct {
	mu sync.Mutex
	m  map[string]int
}

func (s *Store) Set(k string, v int) {
	lock, unlock := (*sync.Mutex).Lock, (*sync.Mutex).Unlock
	lock(&s.mu)
	defer unlock(&s.mu)
	s.m[k] = v
}

func (s *Store) Get(k string) int {
	(*sync.Mutex).Lock(&s.mu)
	defer s.mu.Unlock()
	return s.m[k]
}

// Other's lock meets no method expression: it is swapped.
type Other struct {
	mu sync.Mutex
}

func (o *Other) Touch() {
	o.mu.Lock()
	o.mu.Unlock()
}
