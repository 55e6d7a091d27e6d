package embedgeneric

import "sync"

// LockAll and Box are generic, declared in the embedded file.
func LockAll[K comparable](m map[K]*sync.Mutex) {
	for _, mu := range m {
		mu.Lock()
		mu.Unlock()
	}
}

type Box[K comparable] struct {
	locks map[K]*sync.Mutex
}

func NewBox[K comparable]() *Box[K] { return &Box[K]{locks: map[K]*sync.Mutex{}} }
