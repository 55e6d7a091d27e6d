package aliases

import (
	"fmt"
	s "sync"
)

// Store embeds its lock; its Cond waits on a read lock.
type Store struct {
	s.RWMutex
	revMu   *s.Mutex
	ready   *s.Cond
	started s.Once
	byName  map[string]*s.Mutex
	workers s.WaitGroup
	locker  s.Locker
}

func New() *Store {
	st := &Store{revMu: &s.Mutex{}, byName: map[string]*s.Mutex{}}
	st.ready = s.NewCond(st.RLocker())
	st.locker = st.revMu
	st.byName["x"] = new(s.Mutex)
	c := s.Cond{L: &s.Mutex{}}
	_ = c
	fmt.Println(st.RWMutex.TryLock())
	return st
}

func shadow() {
	s := struct{ Mutex int }{1}
	_ = s.Mutex
}
