package held_test

import (
	"testing"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
)

func TestPushFindRemoveRekey(t *testing.T) {
	g := held.New(goid.ID())
	a, b, c := class.New(nil, "Mutex", 1), class.New(nil, "Mutex", 2), class.New(nil, "Mutex", 3)
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
	if g.Find(b) != 1 || g.Find(class.New(nil, "Mutex", 4)) != -1 {
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

func TestPendingProvedByOwnReleases(t *testing.T) {
	l := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	g := held.New(1)
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
	g := held.New(1)
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
	g := held.New(1)
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
	g := held.New(1)
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
	g := held.New(1)
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
	g := held.New(1)
	n := 0
	for i := range 2 * held.MaxWaiting {
		y := &class.Lock{ID: uint64(10 + i), Class: &class.Class{ID: 3}}
		if g.Hold(held.Wait{Key: chain.Key(100 + i), To: y, Srcs: []held.Src{{Lock: x, Gen: x.ReadGen()}}}) {
			n++
		}
	}
	if n != held.MaxWaiting || g.WaitingEdges() != held.MaxWaiting {
		t.Fatalf("held %d, waiting %d, want %d", n, g.WaitingEdges(), held.MaxWaiting)
	}
	g.Retag(7)
	if g.HasWaits() || g.WaitingEdges() != 0 {
		t.Fatal("Retag keeps what waited")
	}
}
