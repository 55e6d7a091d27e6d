package held_test

import (
	"testing"

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
	g.HoldBack(held.Pending{Lock: l, Gen: l.ReadGen(), Left: 2, Stack: 7})
	if !g.HasPending() {
		t.Fatal("HoldBack kept nothing")
	}
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

func TestPendingDroppedWhenAnotherGoroutineReleases(t *testing.T) {
	l := &class.Lock{ID: 1, Class: &class.Class{ID: 2}}
	g := held.New(1)
	g.HoldBack(held.Pending{Lock: l, Gen: l.ReadGen(), Left: 2})
	g.ReleasedRead(l)
	l.BumpReadGen() // another goroutine released a read hold
	if p := g.ReleasedRead(l); len(p) != 0 {
		t.Fatalf("a hand-off proved %v", p)
	}
	if g.HasPending() {
		t.Fatal("a report resting on a handed-off hold stays held back")
	}
}
