package names

import "sync"

var mu sync.Mutex

var byPtr = &sync.Mutex{}

type store struct {
	revMu sync.RWMutex
	sync.Mutex
	ptr   *sync.Mutex
	inner struct{ mu sync.Mutex }
}

func (s *store) use() {
	mu.Lock()
	defer mu.Unlock()
	s.revMu.RLock()
	s.revMu.RUnlock()
	s.Lock()
	s.Unlock()
	s.ptr.Lock()
	s.ptr.Unlock()
	s.inner.mu.Lock()
	s.inner.mu.Unlock()
	byPtr.Lock()
	byPtr.Unlock()
	if s.revMu.TryLock() {
		s.revMu.Unlock()
	}
}
