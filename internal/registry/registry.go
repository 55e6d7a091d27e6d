// Package registry keeps weak references to the live barriers, clocks and
// parameter servers, each with what a debugging page shows of it, so that
// the page can list them without keeping any of them alive, and without
// importing the packages that register (they import lockorder, under
// which the page lives).
//
// barrier.New, staleness.NewClock and paramserver.New each add what they
// create, with a function giving its view ([Barrier], [Clock], [Server]);
// nothing else does. An entry costs a weak pointer and the view function,
// taken once when the object is created: nothing on any object's hot path
// touches the registry.
package registry

import (
	"sync"
	"weak"
)

// A Kind is a kind of registered object; V is what the page shows of one.
type Kind[V any] string

// The kinds of objects registered.
const (
	Barriers Kind[Barrier] = "barrier"
	Clocks   Kind[Clock]   = "clock"
	Servers  Kind[Server]  = "paramserver"
)

// MaxPerKind bounds the entries of one kind. Past it, objects are not
// registered (and counted in [Dropped]) until some of those registered
// are collected.
const MaxPerKind = 4096

// minPrune is the length below which a list is never pruned.
const minPrune = 16

// An entry is a registered object, held weakly.
type entry[V any] interface {
	// alive reports whether the object is still reachable.
	alive() bool
	// strong returns a function giving the object's view, which holds
	// the object, or nil once the object was collected.
	strong() func() V
}

// ref is the entry of an object of type T.
type ref[T, V any] struct {
	p    weak.Pointer[T]
	view func(*T) V
}

func (r ref[T, V]) alive() bool { return r.p.Value() != nil }

func (r ref[T, V]) strong() func() V {
	p := r.p.Value()
	if p == nil {
		return nil
	}
	return func() V { return r.view(p) }
}

type list[V any] struct {
	entries []entry[V] // oldest first
	// prune is the length at which the dead entries are next dropped:
	// twice the live count after the last pruning, so that pruning costs
	// amortized O(1) per Add however many objects come and go.
	prune   int
	dropped int
}

var (
	mu    sync.Mutex
	kinds = map[string]any{} // kind -> *list[V] for the kind's V
)

// listLocked returns kind's list, creating it if create is set. Called
// with mu held.
func listLocked[V any](kind Kind[V], create bool) *list[V] {
	l, _ := kinds[string(kind)].(*list[V])
	if l == nil && create {
		l = &list[V]{prune: minPrune}
		kinds[string(kind)] = l
	}
	return l
}

// Add registers p weakly under kind, with view, which gives what the
// page shows of it: [Views] shows it for as long as it is reachable from
// elsewhere. view is called without any lock of the registry held.
func Add[T, V any](kind Kind[V], p *T, view func(*T) V) {
	e := ref[T, V]{p: weak.Make(p), view: view}
	mu.Lock()
	defer mu.Unlock()
	l := listLocked(kind, true)
	if len(l.entries) >= l.prune || len(l.entries) >= MaxPerKind {
		l.entries = pruned(l.entries)
		l.prune = max(minPrune, 2*len(l.entries))
	}
	if len(l.entries) >= MaxPerKind {
		l.dropped++
		return
	}
	l.entries = append(l.entries, e)
}

// pruned drops the entries whose object was collected, in place.
func pruned[V any](es []entry[V]) []entry[V] {
	out := es[:0]
	for _, e := range es {
		if e.alive() {
			out = append(out, e)
		}
	}
	clear(es[len(out):])
	return out
}

// Views returns the views of at most n objects of kind that are still
// reachable, oldest first. It calls the objects' view functions after
// letting go of the registry's lock.
func Views[V any](kind Kind[V], n int) []V {
	var views []func() V
	mu.Lock()
	if l := listLocked(kind, false); l != nil {
		for _, e := range l.entries {
			if len(views) == n {
				break
			}
			if f := e.strong(); f != nil {
				views = append(views, f)
			}
		}
	}
	mu.Unlock()
	var out []V // nil if there is none, as the page's JSON has always said
	for _, f := range views {
		out = append(out, f())
	}
	return out
}

// Dropped returns how many objects of kind were not registered because
// MaxPerKind of them were live.
func Dropped[V any](kind Kind[V]) int {
	mu.Lock()
	defer mu.Unlock()
	if l := listLocked(kind, false); l != nil {
		return l.dropped
	}
	return 0
}
