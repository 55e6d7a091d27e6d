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
