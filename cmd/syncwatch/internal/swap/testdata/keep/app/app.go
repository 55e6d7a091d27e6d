package app

import (
	"sync"

	"example.com/keep/lib"
)

type guarded struct {
	mu    sync.Mutex // passed to lib.Guard: stays sync
	other sync.Mutex // swapped
}

func run(g *guarded) {
	lib.Guard(&g.mu, func() {})
	g.other.Lock()
	g.other.Unlock()
	viaHelper(&sync.Mutex{})
	m := lib.Shared() // from lib: stays sync
	m.Lock()
	m.Unlock()
}

// viaHelper's parameter reaches lib.Guard, so it and its argument stay sync.
func viaHelper(mu *sync.Mutex) { lib.Guard(mu, func() {}) }

var (
	kept  sync.Mutex   // passed to lib.Guard: stays sync, unnamed
	named sync.RWMutex // swapped, and named app.named
	ptr   *sync.Mutex  // a pointer: not named
)

func useKept() { lib.Guard(&kept, func() {}) }

type viaPtr struct {
	mu *sync.Mutex // passed to lib.Guard: stays sync, so never named
}

func (v *viaPtr) run() {
	lib.Guard(v.mu, func() {})
	v.mu.Lock()
	v.mu.Unlock()
}

type box[T any] struct {
	mu sync.Mutex // passed to lib.Guard: stays sync, in every instance
	v  T
}

func useBox(b *box[int]) {
	lib.Guard(&b.mu, func() {})
	b.mu.Lock()
	b.mu.Unlock()
}

func useTwo() {
	m, err := lib.Two() // m stays sync, and so does held
	if err != nil {
		return
	}
	var held *sync.Mutex
	held = m
	held.Lock()
	held.Unlock()
}

func useRange() {
	for _, mu := range lib.Locks { // mu stays sync, and so does last
		last := mu
		last.Lock()
		last.Unlock()
	}
}
