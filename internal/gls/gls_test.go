package gls_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

func TestGetIsPerGoroutine(t *testing.T) {
	g := gls.Get(goid.ID())
	if g.ID() != goid.ID() || gls.Get(goid.ID()) != g || gls.Find(goid.ID()) != g {
		t.Fatal("Get is not stable for one goroutine")
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

// states is how many goroutine states exist.
func states() int {
	n, _, _, _ := gls.Stats()
	return n
}

// useOnce is what a goroutine that locks once does to its state: wake it,
// hold something, release it and rest.
func useOnce() {
	g := gls.Get(goid.ID())
	g.Push(held.Entry{})
	g.Pop()
	g.Rest()
}

// Many more goroutines than slots come and go, and no goroutine dump is
// ever taken: the states stay bounded by the table, and a trim gives them
// back once the goroutines are gone.
func TestStatesStayBoundedWithoutDumps(t *testing.T) {
	dumps := waitfor.DumpCount()
	for range 6 {
		var wg sync.WaitGroup
		for range 4000 {
			wg.Go(useOnce)
		}
		wg.Wait()
	}
	// The table, plus an overflow trimmed whenever it doubles: at most
	// twice what was busy at once, here up to a round's goroutines.
	if n := states(); n > 1<<13+2*4000 {
		t.Fatalf("%d states after 24000 goroutines came and went", n)
	}
	gls.Trim()
	if n := states(); n > 100 {
		t.Fatalf("%d states after a trim, with a few goroutines alive", n)
	}
	if d := waitfor.DumpCount(); d != dumps {
		t.Fatalf("%d goroutine dumps taken", d-dumps)
	}
}

// 20,000 goroutines alive at once, each using its state once, then
// waiting: no dump, and the states stay bounded although none exited.
func TestManyLiveGoroutinesTakeNoDump(t *testing.T) {
	dumps := waitfor.DumpCount()
	release := make(chan struct{})
	var used, done sync.WaitGroup
	for range 20000 {
		used.Add(1)
		done.Go(func() {
			useOnce()
			used.Done()
			<-release
		})
	}
	used.Wait()
	if n := states(); n > 1<<13+20000/4 {
		t.Errorf("%d states for 20000 idle goroutines", n)
	}
	close(release)
	done.Wait()
	if d := waitfor.DumpCount(); d != dumps {
		t.Fatalf("%d goroutine dumps taken", d-dumps)
	}
}

// A busy state is never taken, however many goroutines want a slot; an
// idle one may be, and its owner then gets a new state, never another
// goroutine's.
func TestBusyStatesAreKept(t *testing.T) {
	const holders = 64
	var ready, stop sync.WaitGroup
	stop.Add(1)
	var bad atomic.Int64
	var wg sync.WaitGroup
	for range holders {
		ready.Add(1)
		wg.Go(func() {
			id := goid.ID()
			g := gls.Get(id)
			g.Push(held.Entry{Elem: uint64(id)})
			ready.Done()
			stop.Wait()
			if gls.Find(id) != g || g.Len() != 1 || g.Entries()[0].Elem != uint64(id) {
				bad.Add(1)
			}
			g.Pop()
			g.Rest()
		})
	}
	ready.Wait()
	var churn sync.WaitGroup
	for range 20000 {
		churn.Go(useOnce)
	}
	churn.Wait()
	gls.Trim()
	stop.Done()
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d busy states lost", bad.Load())
	}
}

// The handshake, under -race: owners wake, write, check and rest their
// states while other goroutines reclaim idle ones and trims drop them. An
// owner must never see its busy state taken or changed by anyone, nor get
// a state that is not its own.
func TestReclaimRacesOwners(t *testing.T) {
	const owners, rounds = 32, 300
	_, _, reclaimed, _ := gls.Stats()
	var bad atomic.Int64
	stop := make(chan struct{})
	var reclaimers sync.WaitGroup
	for range 2 {
		reclaimers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				var wg sync.WaitGroup
				for range 200 {
					wg.Go(useOnce)
				}
				wg.Wait()
				gls.Trim()
			}
		})
	}
	var wg sync.WaitGroup
	for range owners {
		wg.Go(func() {
			id := goid.ID()
			var seq uint64
			for i := range rounds {
				g := gls.Get(id)
				if g.ID() != id || g.Len() != 0 || !g.Busy() {
					bad.Add(1)
				}
				if seq == 0 {
					seq = g.Seq()
				}
				g.Push(held.Entry{Elem: uint64(i)})
				for range 3 {
					if gls.Find(id) != g || gls.Home(id) != g && gls.Get(id) != g {
						bad.Add(1)
					}
				}
				if g.Len() != 1 || g.Entries()[0].Elem != uint64(i) {
					bad.Add(1)
				}
				g.Pop()
				g.Rest()
			}
		})
	}
	wg.Wait()
	close(stop)
	reclaimers.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d broken handoffs", bad.Load())
	}
	if _, _, r, _ := gls.Stats(); r == reclaimed {
		t.Fatal("no state was reclaimed: the test raced nothing")
	}
}

// A state dropped by a trim comes back with its creation number: the
// goroutine still counts as one that existed since then.
func TestTrimKeepsCreationNumber(t *testing.T) {
	id := goid.ID()
	g := gls.Get(id)
	seq := g.Seq()
	g.Rest()
	// Enough other states for the trim to drop idle ones.
	release := make(chan struct{})
	var used, done sync.WaitGroup
	for range 200 {
		used.Add(1)
		done.Go(func() {
			gls.Get(goid.ID()).Rest()
			used.Done()
			<-release
		})
	}
	used.Wait()
	gls.Trim()
	if gls.Find(id) == g {
		t.Fatal("the trim kept an idle state")
	}
	if g2 := gls.Get(id); g2.Seq() != seq || g2.ID() != id {
		t.Fatalf("revived state: seq %d id %d, want %d %d", g2.Seq(), g2.ID(), seq, id)
	}
	close(release)
	done.Wait()
}

func BenchmarkGet(b *testing.B) {
	gls.Get(goid.ID())
	for b.Loop() {
		gls.Get(goid.ID())
	}
}

// BenchmarkGetRest is what an outermost Lock and Unlock pay for the
// handshake: waking the state and resting it.
func BenchmarkGetRest(b *testing.B) {
	for b.Loop() {
		gls.Get(goid.ID()).Rest()
	}
}
