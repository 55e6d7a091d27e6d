package held_test

import (
	"runtime"
	"testing"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
)

// edgesOf returns the edges of one acquisition of to, chain key, from
// each of froms as they stand now.
func edgesOf(key chain.Key, to *class.Lock, froms ...*class.Lock) []held.Edge {
	es := make([]held.Edge, len(froms))
	for i, f := range froms {
		es[i] = held.NewEdge(f, to, graph.Observation{}, 0)
		es[i].Key = key
	}
	return es
}

// newLocks returns a maker of new Mutex identities, at addresses from
// base on, which it keeps alive until the test ends: edges hold their
// locks weakly.
func newLocks(t testing.TB, base uintptr) func() *class.Lock {
	var locks []*class.Lock
	t.Cleanup(func() { runtime.KeepAlive(locks) })
	return func() *class.Lock {
		l := class.New(nil, kind.Mutex, base+uintptr(len(locks)))
		locks = append(locks, l)
		return l
	}
}

func heldBy(id int64, ls ...*class.Lock) {
	for _, l := range ls {
		l.SetHolder(id)
	}
}

// An edge is proved by its own hold's release; the others wait on.
func TestProvingReleasedProvesItsHoldsEdges(t *testing.T) {
	var p held.Proving
	a, b, c := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2), class.New(nil, kind.Mutex, 3)
	defer runtime.KeepAlive([]*class.Lock{a, b, c}) // the edges hold them weakly
	heldBy(7, a, b)
	if _, ok := p.HoldEdges(edgesOf(10, c, a, b), 0); !ok {
		t.Fatal("HoldEdges refused two edges")
	}
	if !p.ProvingKey(10, 0) || !p.WaitsOnKey(10) || p.ProvingEdges() != 2 {
		t.Fatal("the acquisition's edges should wait")
	}
	p.Released(a, 0)
	got := p.TakeProved()
	if f, to := got[0].Locks(); len(got) != 1 || f != a || to != c {
		t.Fatalf("proved %v, want a -> c", got)
	}
	p.DoneProved()
	if p.HasProved() {
		t.Fatal("DoneProved forgets them")
	}
	if !p.WaitsOnKey(10) || p.ProvingEdges() != 1 {
		t.Fatal("b -> c should still wait")
	}
	p.Released(b, 0)
	if got := p.TakeProved(); len(got) != 1 || got[0].FromID() != b.ID {
		t.Fatalf("proved %v, want b -> c", got)
	}
	if p.HasProving() || p.WaitsOnKey(10) || p.DroppedKey(10) {
		t.Fatal("nothing should wait, nor be dropped")
	}
}

// A hold released by another goroutine moves its lock's count of holder
// changes: the edges seen under it are dropped, not the other edges of
// their acquisition, and the chain is remembered as dropped.
func TestProvingDropsTheEdgesOfAHandedOffHold(t *testing.T) {
	var p held.Proving
	a, b, c := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2), class.New(nil, kind.Mutex, 3)
	defer runtime.KeepAlive([]*class.Lock{a, b, c}) // the edges hold them weakly
	heldBy(7, a, b)
	p.HoldEdges(edgesOf(10, c, a, b), 0)
	a.ClearHolder() // another goroutine unlocked a
	if p.ProvingKey(10, 0) {
		t.Fatal("an acquisition with an edge that no longer stands must be recorded again")
	}
	a.SetHolder(7) // the goroutine takes a again: a hold of its own, not the one the edge was seen under
	p.Released(a, 0)
	if got := p.TakeProved(); len(got) != 0 {
		t.Fatalf("proved %v under a hold handed off", got)
	}
	if !p.WaitsOnKey(10) || p.ProvingEdges() != 1 || !p.DroppedKey(10) {
		t.Fatal("b -> c still waits; the chain is remembered as dropped")
	}
	p.Released(b, 0)
	if got := p.TakeProved(); len(got) != 1 || got[0].FromID() != b.ID {
		t.Fatalf("proved %v, want b -> c, its own hold's", got)
	}
	p.DoneProved()
	p.HoldEdges(edgesOf(10, c, a, b), 0)
	if p.DroppedKey(10) {
		t.Fatal("seen anew, the chain is no longer dropped")
	}
}

// Edges of another epoch (before a Reset) are dropped, never proved.
func TestProvingForgetsAnotherEpoch(t *testing.T) {
	var p held.Proving
	a, c := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 3)
	defer runtime.KeepAlive([]*class.Lock{a, c}) // the edges hold them weakly
	heldBy(7, a)
	p.HoldEdges(edgesOf(10, c, a), 0)
	if p.ProvingKey(10, 1) {
		t.Fatal("another epoch's edges stand for nothing")
	}
	p.Released(a, 1)
	if got := p.TakeProved(); len(got) != 0 || p.HasProving() {
		t.Fatalf("proved %v of another epoch", got)
	}
}

// The bounds: an acquisition with too many edges is refused; past the
// total, the oldest acquisitions' edges come back to be added at once.
func TestProvingBounds(t *testing.T) {
	var p held.Proving
	to := class.New(nil, kind.Mutex, 1)
	many := make([]*class.Lock, held.MaxProvingAt+1)
	defer runtime.KeepAlive(many) // the edges hold them weakly: a collection must not end them
	defer runtime.KeepAlive(to)
	for i := range many {
		many[i] = class.New(nil, kind.Mutex, uintptr(i+2))
	}
	heldBy(7, many...)
	if _, ok := p.HoldEdges(edgesOf(1, to, many...), 0); ok {
		t.Fatal("an acquisition past MaxProvingAt must be refused")
	}
	if p.HasProving() {
		t.Fatal("a refused acquisition keeps nothing")
	}
	n := held.MaxProving / held.MaxProvingAt
	for k := range n {
		if out, ok := p.HoldEdges(edgesOf(chain.Key(k+2), to, many[:held.MaxProvingAt]...), 0); !ok || len(out) != 0 {
			t.Fatalf("acquisition %d: ok %v, %d out", k, ok, len(out))
		}
	}
	out, ok := p.HoldEdges(edgesOf(99, to, many[0]), 0)
	if !ok || len(out) != 1 || len(out[0]) != held.MaxProvingAt || out[0][0].Key != 2 {
		t.Fatalf("the oldest acquisition should come out: ok %v, %d", ok, len(out))
	}
	if p.ProvingEdges() > held.MaxProving || p.WaitsOnKey(2) || p.DroppedKey(2) {
		t.Fatal("past the bound: the oldest out, every edge of it added, so not dropped")
	}
}

// Past the bound, the edges of a hold most edges wait on (a lock kept for
// good, thousands of new chains taken under it) are dropped, not added:
// the oldest of a deep nesting released in order are added.
func TestProvingPastTheBoundDropsTheEdgesOfAKeptHold(t *testing.T) {
	var p held.Proving
	kept, other := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2)
	defer runtime.KeepAlive([]*class.Lock{kept, other}) // the edges hold them weakly
	heldBy(7, kept, other)
	next := newLocks(t, 3)
	// The first acquisition has an edge from each; then only kept's.
	if _, ok := p.HoldEdges(edgesOf(1, next(), kept, other), 0); !ok {
		t.Fatal("refused")
	}
	for k := range held.MaxProving - 2 {
		p.HoldEdges(edgesOf(chain.Key(k+2), next(), kept), 0)
	}
	if p.ProvingEdges() != held.MaxProving {
		t.Fatalf("%d edges wait, want %d", p.ProvingEdges(), held.MaxProving)
	}
	out, ok := p.HoldEdges(edgesOf(chain.Key(held.MaxProving+1), next(), kept), 0)
	if !ok || len(out) != 1 || len(out[0]) != 1 || out[0][0].FromID() != other.ID {
		t.Fatalf("the oldest acquisition out: want other's edge alone added, kept's dropped; got %d", len(out))
	}
	if !p.DroppedKey(1) {
		t.Fatal("its chain lost an edge: remembered as dropped")
	}
	if p.ProvingEdges() > held.MaxProving {
		t.Fatal("over the bound")
	}
}

// Past the bound, an acquisition whose lock its goroutine has released
// since (a section ended under the holds) is no nesting: its edges are
// dropped, and its chain given up (to be cached). One whose lock is still
// held (a nesting) has them added.
func TestProvingPastTheBoundDropsASectionReleasedUnderTheHolds(t *testing.T) {
	var p held.Proving
	hold := newLocks(t, 1)
	holds := make([]*class.Lock, 8)
	for i := range holds {
		holds[i] = hold()
	}
	heldBy(7, holds...)
	next := newLocks(t, 100)
	section, nesting := next(), next()
	p.HoldEdges(edgesOf(1, section, holds...), 0)
	if !p.ProvingInto(section.ID) {
		t.Fatal("edges into the section's lock wait")
	}
	p.ReleasedInto(section.ID)
	p.HoldEdges(edgesOf(2, nesting, holds...), 0)
	for k := 3; p.ProvingEdges()+len(holds) <= held.MaxProving; k++ {
		p.HoldEdges(edgesOf(chain.Key(k), next(), holds...), 0)
	}
	if out, _ := p.HoldEdges(edgesOf(chain.Key(held.MaxProving), next(), holds...), 0); len(out) != 0 {
		t.Fatalf("the oldest out, the section: want its edges dropped, got %d acquisitions added", len(out))
	}
	out, _ := p.HoldEdges(edgesOf(chain.Key(held.MaxProving+1), next(), holds...), 0)
	if len(out) != 1 || len(out[0]) != len(holds) || out[0][0].Key != 2 {
		t.Fatalf("the next oldest out, the nesting: want its %d edges added, got %d acquisitions", len(holds), len(out))
	}
	if ks := p.GivenUp(); len(ks) != 1 || ks[0] != 1 {
		t.Fatalf("the section's chain is given up, for the caller to cache: got %v", ks)
	}
	if p.DroppedKey(1) || p.DroppedKey(2) || len(p.GivenUp()) != 0 {
		t.Fatal("nothing dropped, and GivenUp forgets what it returned")
	}
}
