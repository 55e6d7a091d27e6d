package embedself

import "sync"

// Counter hands its own lock to a Store.
type Counter struct {
	mu    sync.Mutex // flows to Store.Add, declared in the embedded file
	other sync.Mutex // its own
	s     Store
	n     int
}

// Inc adds one to c and to its store.
func (c *Counter) Inc() {
	c.other.Lock()
	c.n++
	c.other.Unlock()
	c.s.Add(&c.mu)
}
