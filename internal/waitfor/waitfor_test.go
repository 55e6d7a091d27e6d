package waitfor_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// needs returns a Blockers func naming ids.
func needs(ids ...int64) func([]int64) []int64 {
	return func(dst []int64) []int64 { return append(dst, ids...) }
}

// register registers ws and unregisters them when the test ends.
func register(t *testing.T, ws ...*waitfor.Wait) {
	for _, w := range ws {
		waitfor.Begin(w)
		t.Cleanup(func() { waitfor.End(w) })
	}
}

// Goroutine ids far above any real one, so that tests do not collide with
// the waits of real goroutines.
const base = 1 << 40

func TestLookupAndEnd(t *testing.T) {
	w := &waitfor.Wait{Goroutine: base + 1, Kind: waitfor.KindBarrier, Object: "allreduce", Detail: "rank 3"}
	require.Nil(t, waitfor.Lookup(base+1))
	before := time.Now()
	waitfor.Begin(w)
	assert.Same(t, w, waitfor.Lookup(base+1))
	assert.Equal(t, "barrier allreduce (rank 3)", waitfor.Describe(w))
	assert.False(t, w.Since().Before(before.Add(-time.Millisecond)), "the wait began after the clock was read before Begin")
	waitfor.End(&waitfor.Wait{Goroutine: base + 1}) // not the current wait: ignored
	assert.Same(t, w, waitfor.Lookup(base+1))
	waitfor.End(w)
	assert.Nil(t, waitfor.Lookup(base+1))
}

func TestCycleThroughLocksAndAWaitGroup(t *testing.T) {
	a, b := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2)
	a.SetHolder(base + 10)
	b.SetHolder(base + 11)
	register(t,
		&waitfor.Wait{Goroutine: base + 10, Kind: waitfor.KindLock, Lock: b, HolderKnown: true, Holds: []waitfor.Hold{{Lock: a}}},
		&waitfor.Wait{Goroutine: base + 11, Kind: waitfor.KindWaitGroup, Object: "wg", Blockers: needs(base + 12), Holds: []waitfor.Hold{{Lock: b}}},
		&waitfor.Wait{Goroutine: base + 12, Kind: waitfor.KindLock, Lock: a, HolderKnown: true},
		// Waits on the cycle from outside it: not part of it.
		&waitfor.Wait{Goroutine: base + 13, Kind: waitfor.KindLock, Lock: a, HolderKnown: true},
	)
	cycles := waitfor.Snapshot().Cycles()
	var mine [][]*waitfor.Wait
	for _, c := range cycles {
		if c[0].Goroutine >= base {
			mine = append(mine, c)
		}
	}
	require.Len(t, mine, 1)
	var ids []int64
	for _, w := range mine[0] {
		ids = append(ids, w.Goroutine-base)
	}
	assert.ElementsMatch(t, []int64{10, 11, 12}, ids)
}

// A lock's holder is trusted in a cycle only if that goroutine's own wait
// lists the lock: the holder recorded on a lock goes stale when the lock is
// taken where holders are not tracked.
func TestStaleHolderMakesNoCycle(t *testing.T) {
	a, b := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2)
	a.SetHolder(base + 60)
	b.SetHolder(base + 61)
	register(t,
		&waitfor.Wait{Goroutine: base + 60, Kind: waitfor.KindLock, Lock: b, HolderKnown: true, Holds: []waitfor.Hold{{Lock: a}}},
		&waitfor.Wait{Goroutine: base + 61, Kind: waitfor.KindLock, Lock: a, HolderKnown: true}, // holds nothing it says
	)
	for _, c := range waitfor.Snapshot().Cycles() {
		assert.Less(t, c[0].Goroutine, int64(base), "a cycle through a stale holder")
	}
}

// The same waits give the same cycle at every look, whatever order a
// primitive lists the goroutines it needs in, so that a cycle can be
// watched through its grace period.
func TestCyclesAreStable(t *testing.T) {
	l := class.New(nil, kind.Mutex, 1)
	l.SetHolder(base + 70)
	var flip bool
	register(t,
		&waitfor.Wait{Goroutine: base + 70, Kind: waitfor.KindWaitGroup, Object: "pool", Holds: []waitfor.Hold{{Lock: l}},
			Blockers: func(dst []int64) []int64 {
				flip = !flip
				if flip {
					return append(dst, base+72, base+71)
				}
				return append(dst, base+71, base+72)
			}},
		&waitfor.Wait{Goroutine: base + 71, Kind: waitfor.KindLock, Lock: l, HolderKnown: true},
		&waitfor.Wait{Goroutine: base + 72, Kind: waitfor.KindLock, Lock: l, HolderKnown: true},
	)
	key := func() []int64 {
		var ids []int64
		for _, c := range waitfor.Snapshot().Cycles() {
			if c[0].Goroutine >= base+70 {
				for _, w := range c {
					ids = append(ids, w.Goroutine)
				}
			}
		}
		return ids
	}
	first := key()
	require.NotEmpty(t, first)
	for range 10 {
		assert.Equal(t, first, key())
	}
}

func TestBoundedWaitBreaksNoCycle(t *testing.T) {
	a, b := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2)
	a.SetHolder(base + 20)
	b.SetHolder(base + 21)
	register(t,
		&waitfor.Wait{Goroutine: base + 20, Kind: waitfor.KindLock, Lock: b, HolderKnown: true, Bounded: true},
		&waitfor.Wait{Goroutine: base + 21, Kind: waitfor.KindLock, Lock: a, HolderKnown: true},
	)
	for _, c := range waitfor.Snapshot().Cycles() {
		assert.Less(t, c[0].Goroutine, int64(base), "a cycle through a bounded wait")
	}
}

func TestWriterWaitingForAReaderThatWaitsForIt(t *testing.T) {
	rw, m := class.New(nil, kind.RWMutex, 1), class.New(nil, kind.Mutex, 2)
	m.SetHolder(base + 30)
	register(t,
		// 30 holds m and waits to write rw, which 31 holds for reading.
		&waitfor.Wait{Goroutine: base + 30, Kind: waitfor.KindLock, Lock: rw, HolderKnown: true, Holds: []waitfor.Hold{{Lock: m}}},
		&waitfor.Wait{Goroutine: base + 31, Kind: waitfor.KindLock, Lock: m, HolderKnown: true,
			Holds: []waitfor.Hold{{Lock: rw, Read: true, Gen: rw.ReadGen()}}},
	)
	g := waitfor.Snapshot()
	assert.Equal(t, []int64{base + 31}, g.Blockers(g.Wait(base+30)))
	found := false
	for _, c := range g.Cycles() {
		found = found || c[0].Goroutine >= base
	}
	assert.True(t, found)
	rw.BumpReadGen() // the read hold was released by someone else
	g = waitfor.Snapshot()
	assert.Empty(t, g.Blockers(g.Wait(base+30)))
}

func TestExplainFollowsTheChainToARealGoroutine(t *testing.T) {
	l := class.NewNamed("aggregation_lock", kind.Mutex, 1)
	ch := make(chan struct{})
	var wg sync.WaitGroup
	holder := make(chan int64)
	wg.Add(1)
	go func() {
		defer wg.Done()
		holder <- goid.ID()
		<-ch
	}()
	h := <-holder
	defer func() { close(ch); wg.Wait() }()
	l.SetHolder(h)
	w := &waitfor.Wait{Goroutine: base + 40, Kind: waitfor.KindLock, Lock: l, HolderKnown: true}
	register(t, w)
	var d *waitfor.Dump
	require.Eventually(t, func() bool {
		d = waitfor.Fresh()
		return d.States()[h] == "chan receive"
	}, 5*time.Second, time.Millisecond)
	got := waitfor.Snapshot().Explain(w, d)
	assert.True(t, strings.HasPrefix(got, "waiting for lock aggregation_lock#"), got)
	assert.Contains(t, got, ", held by goroutine ")
	assert.Contains(t, got, "which is blocked in chan receive at github.com/syncwatch/syncwatch/internal/waitfor_test.")
	gone := make(chan int64)
	go func() { gone <- goid.ID() }()
	exited := <-gone
	require.Eventually(t, func() bool { return waitfor.Fresh().Exited(exited) }, 5*time.Second, time.Millisecond)
	assert.Equal(t, "has exited", waitfor.RoutineState(waitfor.Fresh(), exited))
}

// A finding stands while what it found does: a cycle while each of its
// waits is its goroutine's current one, a lock held by an exited
// goroutine while that goroutine still holds it. Findings are delivered
// on a goroutine of their own, after the look.
func TestFindingStandsWhileWhatItFoundDoes(t *testing.T) {
	a, b := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2)
	a.SetHolder(base + 80)
	b.SetHolder(base + 81)
	wa := &waitfor.Wait{Goroutine: base + 80, Kind: waitfor.KindLock, Lock: b, HolderKnown: true, Holds: []waitfor.Hold{{Lock: a}}}
	wb := &waitfor.Wait{Goroutine: base + 81, Kind: waitfor.KindLock, Lock: a, HolderKnown: true, Holds: []waitfor.Hold{{Lock: b}}}
	register(t, wa, wb)
	f := waitfor.Finding{Kind: waitfor.Deadlock, Waits: []*waitfor.Wait{wa, wb}}
	assert.True(t, f.Standing())
	waitfor.End(wb) // someone outside the cycle unlocked a: 81 took it
	assert.False(t, f.Standing())
	register(t, &waitfor.Wait{Goroutine: base + 81, Kind: waitfor.KindLock, Lock: a, HolderKnown: true})
	assert.False(t, f.Standing(), "a new wait of the same goroutine is not the one found")

	c := class.New(nil, kind.Mutex, 3)
	c.SetHolder(base + 90) // held by a goroutine that has exited
	wc := &waitfor.Wait{Goroutine: base + 91, Kind: waitfor.KindLock, Lock: c, HolderKnown: true}
	register(t, wc)
	g := waitfor.Finding{Kind: waitfor.HeldByExited, Waits: []*waitfor.Wait{wc}, Holder: base + 90}
	assert.True(t, g.Standing())
	c.SetHolder(base + 92) // handed off: another goroutine unlocked it and 92 took it
	assert.False(t, g.Standing())

	assert.True(t, waitfor.Finding{Kind: waitfor.LongWait, Waits: []*waitfor.Wait{wc}}.Standing())
}

// A lock's recorded holder that waits for the lock again, without listing
// it among its holds, let it go: the record is stale, and the explanation
// does not say the waiter closes a cycle with it.
func TestStaleHolderWaitingAgainIsNotNamed(t *testing.T) {
	l := class.New(nil, kind.Mutex, 1)
	l.SetHolder(base + 110) // 110 took it, let it go, and queues again
	w := &waitfor.Wait{Goroutine: base + 111, Kind: waitfor.KindLock, Lock: l, HolderKnown: true}
	register(t, w, &waitfor.Wait{Goroutine: base + 110, Kind: waitfor.KindLock, Lock: l, HolderKnown: true})
	g := waitfor.Snapshot()
	assert.Empty(t, g.Blockers(w))
	assert.Equal(t, "waiting for lock "+l.Name()+", holder unknown", g.Explain(w, nil))

	// A holder waiting in a primitive that does not list its holds (a
	// barrier) is trusted.
	m := class.New(nil, kind.Mutex, 2)
	m.SetHolder(base + 112)
	v := &waitfor.Wait{Goroutine: base + 113, Kind: waitfor.KindLock, Lock: m, HolderKnown: true}
	register(t, v, &waitfor.Wait{Goroutine: base + 112, Kind: waitfor.KindBarrier, Object: "b", Bounded: true})
	assert.Equal(t, []int64{base + 112}, waitfor.Snapshot().Blockers(v))
}

// A waiter in a queue that moves is contended, not stuck: a long-wait is
// reported only once the lock has not changed hands for the bound.
func TestLongWaitCountsFromTheLastHandOff(t *testing.T) {
	var mu sync.Mutex
	var long []int64
	waitfor.Configure(waitfor.Settings{Tick: 10 * time.Millisecond, Grace: time.Hour, LongWait: 150 * time.Millisecond,
		Report: func(f waitfor.Finding) {
			if f.Kind == waitfor.LongWait && f.Waits[0].Goroutine >= base {
				mu.Lock()
				long = append(long, f.Waits[0].Goroutine-base)
				mu.Unlock()
			}
		}})
	t.Cleanup(func() { waitfor.Configure(waitfor.Settings{}) })
	longs := func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(long)
	}
	l := class.New(nil, kind.Mutex, 1)
	l.SetHolder(base + 120)
	register(t, &waitfor.Wait{Goroutine: base + 121, Kind: waitfor.KindLock, Lock: l, HolderKnown: true})
	start := time.Now()
	for i := int64(0); time.Since(start) < 600*time.Millisecond; i++ {
		l.SetHolder(base + 122 + i%2) // the lock goes round other goroutines
		time.Sleep(5 * time.Millisecond)
	}
	assert.Empty(t, longs(), "reported while the lock changed hands")
	require.Eventually(t, func() bool { return len(longs()) > 0 }, 5*time.Second, 10*time.Millisecond,
		"not reported once the lock stopped moving")
	assert.Equal(t, []int64{121}, longs())
}

// A cycle of waits that lasts the grace period is looked into: the count
// of inquiries, which tests wait on instead of sleeping, grows.
func TestACycleIsLookedIntoAfterTheGracePeriod(t *testing.T) {
	waitfor.Configure(waitfor.Settings{Tick: 10 * time.Millisecond, Grace: time.Millisecond, DumpEvery: time.Millisecond,
		Recheck: time.Millisecond, KeepLooking: func() bool { return true }, Report: func(waitfor.Finding) {}})
	t.Cleanup(func() { waitfor.Configure(waitfor.Settings{}) })
	n := waitfor.Inquiries()
	a, b := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2)
	a.SetHolder(base + 130)
	b.SetHolder(base + 131)
	register(t,
		&waitfor.Wait{Goroutine: base + 130, Kind: waitfor.KindLock, Lock: b, HolderKnown: true, Holds: []waitfor.Hold{{Lock: a}}},
		&waitfor.Wait{Goroutine: base + 131, Kind: waitfor.KindLock, Lock: a, HolderKnown: true, Holds: []waitfor.Hold{{Lock: b}}},
	)
	require.Eventually(t, func() bool { return waitfor.Inquiries() > n }, 20*time.Second, time.Millisecond,
		"the monitor looks into the cycle")
}
