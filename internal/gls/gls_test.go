package gls_test

import (
	"sync"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
)

func TestGetIsPerGoroutine(t *testing.T) {
	g := gls.Get(goid.ID())
	if g.ID() != goid.ID() || gls.Get(goid.ID()) != g || gls.Find(goid.ID()) != g {
		t.Fatal("Current is not stable for one goroutine")
	}
	var other *held.G
	done := make(chan struct{})
	go func() {
		defer close(done)
		if gls.Find(goid.ID()) != nil {
			t.Error("fresh goroutine already has state")
		}
		other = gls.Get(goid.ID())
	}()
	<-done
	if other == g || other.ID() == g.ID() {
		t.Fatal("two goroutines share state")
	}
}

func TestSweepFreesDeadGoroutines(t *testing.T) {
	me := gls.Get(goid.ID())
	gls.Sweep()
	total := func() int {
		c, o, _ := gls.Stats()
		return c + o
	}
	before := total()
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() { gls.Get(goid.ID()) })
	}
	wg.Wait()
	if mid := total(); mid < before+200 {
		t.Fatalf("states %d -> %d, want +200", before, mid)
	}
	// wg.Wait returns once each goroutine has called Done, a moment before
	// it exits; until it has, a sweep rightly keeps its state. So sweep
	// until the 200 are gone, for at most 5s.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		gls.Sweep()
		after := total()
		if after <= before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after sweep %d states, started with %d", after, before)
		}
	}
	// The live goroutine keeps its state.
	if gls.Find(goid.ID()) != me {
		t.Fatal("sweep freed a live goroutine")
	}
}

func TestTableStaysBounded(t *testing.T) {
	// Many more short-lived goroutines than slots: sweeps keep it bounded.
	for round := range 6 {
		var wg sync.WaitGroup
		for range 4000 {
			wg.Go(func() { gls.Get(goid.ID()) })
		}
		wg.Wait()
		_ = round
	}
	claimed, over, _ := gls.Stats()
	if claimed+over > 1<<13+8000 {
		t.Fatalf("%d states for ~%d live goroutines", claimed+over, 4)
	}
}

func BenchmarkGet(b *testing.B) {
	gls.Get(goid.ID())
	for b.Loop() {
		gls.Get(goid.ID())
	}
}
