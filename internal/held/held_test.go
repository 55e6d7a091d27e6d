package held_test

import (
	"sync"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
)

func TestCurrentIsPerGoroutine(t *testing.T) {
	g := held.Current()
	if g.ID() != goid.ID() || held.Current() != g || held.Mine() != g {
		t.Fatal("Current is not stable for one goroutine")
	}
	var other *held.G
	done := make(chan struct{})
	go func() {
		defer close(done)
		if held.Mine() != nil {
			t.Error("fresh goroutine already has state")
		}
		other = held.Current()
	}()
	<-done
	if other == g || other.ID() == g.ID() {
		t.Fatal("two goroutines share state")
	}
}

func TestPushFindRemoveRekey(t *testing.T) {
	g := held.Current()
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

func TestSweepFreesDeadGoroutines(t *testing.T) {
	me := held.Current()
	held.Sweep()
	total := func() int {
		c, o, _ := held.Stats()
		return c + o
	}
	before := total()
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() { held.Current() })
	}
	wg.Wait()
	if mid := total(); mid < before+200 {
		t.Fatalf("states %d -> %d, want +200", before, mid)
	}
	// wg.Wait returns once each goroutine has called Done, a moment before
	// it exits; until it has, a sweep rightly keeps its state. So sweep
	// until the 200 are gone, for at most 5s.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		held.Sweep()
		after := total()
		if after <= before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after sweep %d states, started with %d", after, before)
		}
	}
	// The live goroutine keeps its state.
	if held.Mine() != me {
		t.Fatal("sweep freed a live goroutine")
	}
}

func TestTableStaysBounded(t *testing.T) {
	// Many more short-lived goroutines than slots: sweeps keep it bounded.
	for round := range 6 {
		var wg sync.WaitGroup
		for range 4000 {
			wg.Go(func() { held.Current() })
		}
		wg.Wait()
		_ = round
	}
	claimed, over, _ := held.Stats()
	if claimed+over > 1<<13+8000 {
		t.Fatalf("%d states for ~%d live goroutines", claimed+over, 4)
	}
}

func BenchmarkCurrent(b *testing.B) {
	held.Current()
	for b.Loop() {
		held.Current()
	}
}
