package chain

import "sync/atomic"

// owners is a set of a chain's owners after the first: open addressing
// over owner serials, at most half full. Has reads it without a lock
// while Add, under the Set's lock, stores an owner in an empty place or
// replaces the set with a larger copy: an owner is added in constant
// time, where a sorted copy at each would cost MaxOwners² per chain.
type owners struct {
	ids []atomic.Uint64 // 0 is empty; len a power of two
	n   int             // owners held; written under the Set's lock
}

// has reports whether o holds owner. A nil set holds none.
func (o *owners) has(owner uint64) bool {
	if o == nil {
		return false
	}
	mask := uint64(len(o.ids) - 1)
	for i := spread(owner) & mask; ; i = (i + 1) & mask {
		switch o.ids[i].Load() {
		case 0: // before owner: a goroutine with no clock asks for 0
			return false
		case owner:
			return true
		}
	}
}

// len returns the number of owners o holds.
func (o *owners) len() int {
	if o == nil {
		return 0
	}
	return o.n
}

// grown returns a set of twice o's room (8 for nil) holding o's owners.
func (o *owners) grown() *owners {
	size := 8
	if o != nil {
		size = 2 * len(o.ids)
	}
	g := &owners{ids: make([]atomic.Uint64, size)}
	if o != nil {
		for i := range o.ids {
			if id := o.ids[i].Load(); id != 0 {
				g.add(id)
			}
		}
	}
	return g
}

// add stores owner, not held, in o, which has room.
func (o *owners) add(owner uint64) {
	mask := uint64(len(o.ids) - 1)
	i := spread(owner) & mask
	for o.ids[i].Load() != 0 {
		i = (i + 1) & mask
	}
	o.ids[i].Store(owner)
	o.n++
}

// spread mixes an owner serial's bits: serials are consecutive.
func spread(x uint64) uint64 { return x * 0x9e3779b97f4a7c15 >> 7 }
