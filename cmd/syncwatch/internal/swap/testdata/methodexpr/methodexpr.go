package methodexpr

import "sync"

// Store's lock is locked through method expressions, which are swapped
// with it: through variables, directly, as an argument, from a field.
type Store struct {
	mu   sync.Mutex
	m    map[string]int
	lock func(*sync.Mutex)
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

func apply(f func(*sync.Mutex), m *sync.Mutex) { f(m) }

func (s *Store) Del(k string) {
	apply((*sync.Mutex).Lock, &s.mu)
	defer apply((*sync.Mutex).Unlock, &s.mu)
	delete(s.m, k)
}

func (s *Store) Reset() {
	s.lock = (*sync.Mutex).Lock
	s.lock(&s.mu)
	s.m = map[string]int{}
	s.mu.Unlock()
}
