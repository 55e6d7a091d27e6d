// Package registry keeps weak references to the live barriers, clocks and
// parameter servers, so that a debugging page can list them without
// keeping any of them alive, and without lockorder or the page's package
// being imported by the packages that register.
//
// barrier.New, staleness.NewClock and paramserver.New each add what they
// create; nothing else does. An entry costs one weak pointer, taken once
// when the object is created: nothing on any object's hot path touches the
// registry.
package registry

import (
	"sync"
	"weak"
)

// The kinds of objects registered.
const (
	Barriers = "barrier"
	Clocks   = "clock"
	Servers  = "paramserver"
)

// MaxPerKind bounds the entries of one kind. Past it, objects are not
// registered (and counted in [Dropped]) until some of those registered
// are collected.
const MaxPerKind = 4096

// minPrune is the length below which a list is never pruned.
const minPrune = 16

type list struct {
	entries []any // weak.Pointer[T] for the kind's T, oldest first
	// prune is the length at which the dead entries are next dropped:
	// twice the live count after the last pruning, so that pruning costs
	// amortized O(1) per Add however many objects come and go.
	prune   int
	dropped int
}

var (
	mu    sync.Mutex
	kinds = map[string]*list{}
)

// Add registers p weakly under kind: [Live] lists it for as long as it is
// reachable from elsewhere. All objects of a kind must have the same type.
func Add[T any](kind string, p *T) {
	wp := weak.Make(p)
	mu.Lock()
	defer mu.Unlock()
	l := kinds[kind]
	if l == nil {
		l = &list{prune: minPrune}
		kinds[kind] = l
	}
	if len(l.entries) >= l.prune || len(l.entries) >= MaxPerKind {
		l.entries = pruned[T](l.entries)
		l.prune = max(minPrune, 2*len(l.entries))
	}
	if len(l.entries) >= MaxPerKind {
		l.dropped++
		return
	}
	l.entries = append(l.entries, wp)
}

// pruned drops the entries whose object was collected, in place.
func pruned[T any](es []any) []any {
	out := es[:0]
	for _, e := range es {
		if wp, ok := e.(weak.Pointer[T]); ok && wp.Value() != nil {
			out = append(out, e)
		}
	}
	clear(es[len(out):])
	return out
}

// Live returns the objects of kind that are still reachable, oldest
// first. The caller holds them strongly from then on.
func Live[T any](kind string) []*T {
	mu.Lock()
	defer mu.Unlock()
	l := kinds[kind]
	if l == nil {
		return nil
	}
	out := make([]*T, 0, len(l.entries))
	for _, e := range l.entries {
		if wp, ok := e.(weak.Pointer[T]); ok {
			if p := wp.Value(); p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// Dropped returns how many objects of kind were not registered because
// MaxPerKind of them were live.
func Dropped(kind string) int {
	mu.Lock()
	defer mu.Unlock()
	if l := kinds[kind]; l != nil {
		return l.dropped
	}
	return 0
}
