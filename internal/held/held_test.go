package held_test

import (
	"slices"
	"testing"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/graph"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
)

func TestPushFindRemoveRekey(t *testing.T) {
	g := held.New(goid.ID(), false)
	a, b, c := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2), class.New(nil, kind.Mutex, 3)
	for _, l := range []*class.Lock{a, b, c} {
		l.SetHolder(g.ID())
		var k uint64 = l.ID
		g.Push(held.Entry{Lock: l, Elem: k})
	}
	t.Cleanup(func() {
		for g.Len() > 0 {
			g.Pop()
		}
	})
	if g.Find(b) != 1 || g.Find(class.New(nil, kind.Mutex, 4)) != -1 {
		t.Fatal("Find")
	}
	g.Remove(1)
	if g.Len() != 2 || g.Entries()[1].Lock != c {
		t.Fatal("Remove")
	}
	if g.Entries()[1].Chain == 0 || g.Entries()[1].Chain == g.Entries()[0].Chain {
		t.Fatal("chain keys not recomputed")
	}
	// c released by another goroutine: no longer valid, pruned.
	c.ClearHolder()
	if g.Valid(&g.Entries()[1]) || !g.Prune() || g.Len() != 1 || g.Top().Lock != a {
		t.Fatal("stale entry not pruned")
	}
}

func TestPushHoldPushesWhatPushWould(t *testing.T) {
	g := held.New(goid.ID(), false)
	l := class.New(nil, kind.RWMutex, 1)
	want := held.Entry{Lock: l, Read: true, Gen: 3, Elem: 5, Chain: 7}
	// A slot that held an entry with every other field set, as a
	// recursive TryLock with a held-profile token leaves it.
	g.Push(held.Entry{Lock: l, Elem: 1, Chain: 2, Gen: 9, Try: true, Again: true, Note: 11})
	g.PopUnnoted()
	g.PushHold(l, want.Read, want.Gen, want.Elem, want.Chain)
	if g.Len() != 1 || *g.Top() != want {
		t.Fatalf("PushHold pushed %+v, want %+v", *g.Top(), want)
	}
	g.PopUnnoted()
	for range 2 * 4 { // past the inline entries: the stack grows
		g.PushHold(l, false, 0, 1, 2)
	}
	if g.Len() != 8 || *g.Top() != (held.Entry{Lock: l, Elem: 1, Chain: 2}) {
		t.Fatalf("after growing: %d entries, top %+v", g.Len(), *g.Top())
	}
}

func TestPendingProvedByOwnReleases(t *testing.T) {
	l := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	g := held.New(1, false)
	g.HoldBack(held.Pending{LockID: l.ID, Left: 1, Stack: 7})
	if !g.HasPending() {
		t.Fatal("HoldBack kept nothing")
	}
	g.TookRead(l) // the second hold is taken
	if p := g.ReleasedRead(l); len(p) != 0 {
		t.Fatalf("one release of two proved %v", p)
	}
	p := g.ReleasedRead(l)
	if len(p) != 1 || p[0].Stack != 7 {
		t.Fatalf("the second release proved %v", p)
	}
	if g.HasPending() {
		t.Fatal("a proved report stays held back")
	}
}

// A new own read hold adds to what must be released, and another lock's
// releases do not count.
func TestPendingCountsOwnHoldsOfItsLock(t *testing.T) {
	l := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	o := &class.Lock{ID: 3, Class: &class.Class{ID: 2}}
	g := held.New(1, false)
	g.HoldBack(held.Pending{LockID: l.ID, Left: 1})
	g.TookRead(l)
	g.ReleasedRead(l) // the second hold
	g.TookRead(l)     // a pair of its own, later
	g.ReleasedRead(l)
	g.ReleasedRead(o)
	if !g.HasPending() {
		t.Fatal("released pairs proved a report resting on a hold never released")
	}
	if p := g.ReleasedRead(l); len(p) != 1 {
		t.Fatalf("the release of the first hold proved %v", p)
	}
}

// A report for the same lock and stack replaces the one held back, and
// at most maxPending are kept.
func TestPendingReplacedAndBounded(t *testing.T) {
	l := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	g := held.New(1, false)
	g.HoldBack(held.Pending{LockID: l.ID, Left: 1, Stack: 7})
	g.TookRead(l)
	g.HoldBack(held.Pending{LockID: l.ID, Left: 1, Stack: 7})
	if p := g.ReleasedRead(l); len(p) != 1 {
		t.Fatalf("the newer report (one release left) was not the one kept: %v", p)
	}
	for i := range 20 {
		g.HoldBack(held.Pending{LockID: l.ID, Left: 1, Stack: uint32(i)})
	}
	p := g.ReleasedRead(l)
	if len(p) != 8 || p[0].Stack != 12 {
		t.Fatalf("kept %v, want the newest 8", p)
	}
}

func TestWaitProvedByOwnRelease(t *testing.T) {
	x := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	z := &class.Lock{ID: 3, Class: &class.Class{ID: 4}}
	y := &class.Lock{ID: 5, Class: &class.Class{ID: 6}}
	g := held.New(1, false)
	w := held.Wait{Key: 42, To: y, Srcs: []held.Src{{Lock: x, Gen: x.ReadGen()}, {Lock: z, Gen: z.ReadGen()}}}
	if !g.Hold(w) || g.WaitingEdges() != 2 || !g.Waiting(42, 0) || g.Waiting(42, 1) || g.Waiting(43, 0) {
		t.Fatal("Hold/Waiting")
	}
	ps := g.Settle(x, 0)
	if len(ps) != 1 || len(ps[0].Srcs) != 1 || ps[0].Srcs[0].Lock != x || ps[0].Complete {
		t.Fatalf("Settle(x) = %+v", ps)
	}
	if !g.Waiting(42, 0) || g.WaitingEdges() != 1 {
		t.Fatal("z's edge still waits, and the chain with it")
	}
	ps = g.Settle(z, 0)
	if len(ps) != 1 || !ps[0].Complete || g.HasWaits() {
		t.Fatalf("Settle(z) = %+v: the chain is complete", ps)
	}
}

func TestWaitDroppedWhenTheGenerationMoves(t *testing.T) {
	x := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	z := &class.Lock{ID: 3, Class: &class.Class{ID: 4}}
	y := &class.Lock{ID: 5, Class: &class.Class{ID: 6}}
	g := held.New(1, false)
	g.Hold(held.Wait{Key: 42, To: y, Srcs: []held.Src{{Lock: x, Gen: x.ReadGen()}, {Lock: z, Gen: z.ReadGen()}}})
	x.BumpReadGen() // another goroutine released a read hold of x
	if g.Waiting(42, 0) {
		t.Fatal("a chain resting on a handed-off hold still waits")
	}
	ps := g.Settle(z, 0)
	if len(ps) != 1 || len(ps[0].Srcs) != 1 || ps[0].Complete {
		t.Fatalf("Settle(z) = %+v: z's edge is proved, the chain is not complete", ps)
	}
	if g.HasWaits() {
		t.Fatal("x's edge still waits")
	}
}

func TestWaitBounded(t *testing.T) {
	x := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	g := held.New(1, false)
	for i := range 2 * held.MaxWaiting {
		y := &class.Lock{ID: uint64(10 + i), Class: &class.Class{ID: uint64(1000 + i)}}
		if !g.Hold(held.Wait{Key: chain.Key(100 + i), To: y, Srcs: []held.Src{{Lock: x, Gen: x.ReadGen()}}}) {
			t.Fatalf("Hold %d refused", i)
		}
		if g.WaitingEdges() > held.MaxWaiting {
			t.Fatalf("waiting %d, past %d", g.WaitingEdges(), held.MaxWaiting)
		}
	}
	if g.WaitingEdges() != held.MaxWaiting {
		t.Fatalf("waiting %d, want %d", g.WaitingEdges(), held.MaxWaiting)
	}
	if g.Waiting(100, 0) || !g.Waiting(chain.Key(100+2*held.MaxWaiting-1), 0) {
		t.Fatal("the oldest make room for the newest")
	}
	if ps := g.Settle(x, 0); len(ps) != held.MaxWaiting || ps[0].Key != chain.Key(100+held.MaxWaiting) {
		t.Fatalf("Settle proved %d, the first %v", len(ps), ps[0].Key)
	}
	srcs := make([]held.Src, held.MaxWaiting+1)
	for i := range srcs {
		l := &class.Lock{ID: uint64(5000 + i), Class: &class.Class{ID: uint64(5000 + i)}}
		srcs[i] = held.Src{Lock: l, Gen: l.ReadGen()}
	}
	if g.Hold(held.Wait{Key: 7, To: x, Srcs: srcs}) || g.HasWaits() {
		t.Fatal("an acquisition with more sources than the bound waits")
	}
	g.Hold(held.Wait{Key: 8, To: x, Srcs: srcs[:1]})
	g.Retag(7)
	if g.HasWaits() || g.WaitingEdges() != 0 {
		t.Fatal("Retag keeps what waited")
	}
}

// TestWaitSameEdgesMerge: acquisitions with the same edges, in other
// chains, wait as one, with every chain to cache and the gate they share.
func TestWaitSameEdgesMerge(t *testing.T) {
	x := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	yc := &class.Class{ID: 6}
	y1, y2 := &class.Lock{ID: 5, Class: yc}, &class.Lock{ID: 7, Class: yc}
	g := held.New(1, false)
	src := []held.Src{{Lock: x, Gen: x.ReadGen()}}
	g.Hold(held.Wait{Key: 42, To: y1, Srcs: slices.Clone(src), Gate: graph.NewGate([]graph.NodeID{3, 4}), Stack: 1})
	g.Hold(held.Wait{Key: 43, To: y2, Srcs: slices.Clone(src), Gate: graph.NewGate([]graph.NodeID{4}), Stack: 2})
	g.Hold(held.Wait{Key: 44, To: y1, ToRead: true, Srcs: slices.Clone(src)})
	if g.WaitingEdges() != 2 || !g.Waiting(42, 0) || !g.Waiting(43, 0) || !g.Waiting(44, 0) {
		t.Fatalf("waiting %d: x->y once for a write, once for a read", g.WaitingEdges())
	}
	g.Hold(held.Wait{Key: 42, To: y1, Srcs: slices.Clone(src), Gate: graph.NewGate([]graph.NodeID{4, 9}), Stack: 3}) // 42 seen anew
	ps := g.Settle(x, 0)
	// The stack shown is that of the sighting that narrowed the gate
	// (Key 43's, stack 2), not the first one's, nor a later one's that
	// narrowed nothing.
	if len(ps) != 2 || !ps[0].Complete || ps[0].Stack != 2 || !slices.Equal(ps[0].Keys(), []chain.Key{43, 42}) {
		t.Fatalf("Settle = %+v", ps)
	}
	if ids := ps[0].Gate.IDs(); !slices.Equal(ids, []graph.NodeID{4}) {
		t.Fatalf("gate %v, want the locks held at both", ids)
	}
	x.BumpReadGen()
	g.Hold(held.Wait{Key: 45, To: y1, Srcs: []held.Src{{Lock: x, Gen: 0}}})
	g.Hold(held.Wait{Key: 46, To: y1, Srcs: []held.Src{{Lock: x, Gen: x.ReadGen()}}})
	if g.Waiting(45, 0) || !g.Waiting(46, 0) {
		t.Fatal("a source that no longer stands merges nothing")
	}
}

// States are numbered as they are created: a state whose Seq is at most
// Created() at some moment existed then.
func TestSeqNumbersStatesAsCreated(t *testing.T) {
	a := held.New(1, false)
	before := held.Created()
	b := held.New(2, false)
	if a.Seq() == 0 || a.Seq() > before || b.Seq() <= before || b.Seq() > held.Created() {
		t.Fatalf("a.Seq %d, Created %d, then b.Seq %d, Created %d", a.Seq(), before, b.Seq(), held.Created())
	}
}
