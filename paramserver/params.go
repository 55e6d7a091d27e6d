package paramserver

import (
	"slices"
	"sort"
)

// Params are named parameter tensors, flattened: a key per tensor, its
// values in a slice. Gradients have the same shape, or a subset of it.
type Params map[string][]float32

// Clone returns a deep copy of p: modifying the copy never affects p.
func (p Params) Clone() Params {
	if p == nil {
		return nil
	}
	out := make(Params, len(p))
	for k, v := range p {
		out[k] = slices.Clone(v)
	}
	return out
}

// maxShards bounds the number of shard locks of a server.
const maxShards = 16

// layout is the fixed shape of a server's parameters: their keys, lengths
// and shards. It never changes after New, so checking a gradient against
// it needs no lock.
type layout struct {
	keys   []string       // sorted
	index  map[string]int // key -> position in keys
	lens   []int          // by position
	shard  []int          // by position
	shards int
}

// newLayout checks the initial parameters and deals their keys, in sorted
// order, round-robin over the shards.
func newLayout(initial Params) (*layout, error) {
	if len(initial) == 0 {
		return nil, &ShapeError{Initial: true, Reason: ShapeEmpty}
	}
	keys := make([]string, 0, len(initial))
	for k := range initial {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	l := &layout{
		keys:   keys,
		index:  make(map[string]int, len(keys)),
		lens:   make([]int, len(keys)),
		shard:  make([]int, len(keys)),
		shards: min(len(keys), maxShards),
	}
	for i, k := range keys {
		if len(initial[k]) == 0 {
			return nil, &ShapeError{Initial: true, Reason: ShapeEmpty, Key: k}
		}
		l.index[k] = i
		l.lens[i] = len(initial[k])
		l.shard[i] = i % l.shards
	}
	return l, nil
}

// check returns the set of shards grad touches, as a bit mask, or a
// *ShapeError if grad is empty, names a key the server does not have, or
// has a length that differs from the parameter's. With several offending
// keys the error names the smallest, so that it does not depend on map
// order.
func (l *layout) check(grad Params) (uint64, error) {
	if len(grad) == 0 {
		return 0, &ShapeError{Reason: ShapeEmpty}
	}
	var mask uint64
	var bad *ShapeError
	for k, g := range grad {
		i, ok := l.index[k]
		switch {
		case !ok:
			if bad == nil || k < bad.Key {
				bad = &ShapeError{Reason: ShapeUnknownKey, Key: k, Want: -1, Got: len(g)}
			}
		case len(g) != l.lens[i]:
			if bad == nil || k < bad.Key {
				bad = &ShapeError{Reason: ShapeLength, Key: k, Want: l.lens[i], Got: len(g)}
			}
		default:
			mask |= 1 << l.shard[i]
		}
	}
	if bad != nil {
		return 0, bad
	}
	return mask, nil
}

// same reports whether p has exactly the keys of ref, with the same
// lengths.
func same(p, ref Params) bool {
	if len(p) != len(ref) {
		return false
	}
	for k, v := range ref {
		if w, ok := p[k]; !ok || len(w) != len(v) {
			return false
		}
	}
	return true
}
