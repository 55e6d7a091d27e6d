package names

import "sync"

// A package-level variable of an unnamed struct type, its lock embedded.
var cache struct {
	sync.Mutex
	m map[string]int
}

// A package-level variable of an unnamed struct type, its lock a field.
var conf struct{ mu sync.RWMutex }

// A named struct type embedded in another: its lock is promoted twice.
type outer struct {
	store
	shards [4]sync.Mutex
	lanes  []*sync.RWMutex
}

// A generic type: its instances' locks are named after it.
type box[T any] struct {
	mu sync.Mutex
	v  T
}

func shapes(o *outer, b *box[int], param *sync.Mutex) {
	cache.Lock()
	cache.Unlock()
	conf.mu.RLock()
	conf.mu.RUnlock()
	o.Lock()
	o.Unlock()
	o.revMu.Lock()
	o.revMu.Unlock()
	o.shards[1].Lock()
	o.shards[1].Unlock()
	o.lanes[0].RLock()
	o.lanes[0].RUnlock()
	b.mu.Lock()
	b.mu.Unlock()
	param.Lock() // a parameter: named where it was declared, or by its first use
	param.Unlock()

	var local sync.Mutex
	local.Lock()
	local.Unlock()
	alias := &o.revMu // a pointer may point anywhere: not named
	alias.Lock()
	alias.Unlock()
	var group struct{ mu sync.Mutex }
	func() {
		group.mu.Lock()
		group.mu.Unlock()
	}()
}

func (s *store) method() {
	var inMethod sync.RWMutex
	inMethod.Lock()
	inMethod.Unlock()
}
