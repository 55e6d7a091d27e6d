package waitfor_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
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
	waitfor.Begin(w)
	assert.Same(t, w, waitfor.Lookup(base+1))
	assert.Equal(t, "barrier allreduce (rank 3)", waitfor.Describe(w))
	assert.WithinDuration(t, time.Now(), w.Since(), time.Second)
	waitfor.End(&waitfor.Wait{Goroutine: base + 1}) // not the current wait: ignored
	assert.Same(t, w, waitfor.Lookup(base+1))
	waitfor.End(w)
	assert.Nil(t, waitfor.Lookup(base+1))
}

func TestCycleThroughLocksAndAWaitGroup(t *testing.T) {
	a, b := class.New(nil, "Mutex", 1), class.New(nil, "Mutex", 2)
	a.SetHolder(base + 10)
	b.SetHolder(base + 11)
	register(t,
		&waitfor.Wait{Goroutine: base + 10, Kind: waitfor.KindLock, Lock: b, HolderKnown: true},
		&waitfor.Wait{Goroutine: base + 11, Kind: waitfor.KindWaitGroup, Object: "wg", Blockers: needs(base + 12)},
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

func TestBoundedWaitBreaksNoCycle(t *testing.T) {
	a, b := class.New(nil, "Mutex", 1), class.New(nil, "Mutex", 2)
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
	rw, m := class.New(nil, "RWMutex", 1), class.New(nil, "Mutex", 2)
	m.SetHolder(base + 30)
	register(t,
		// 30 holds m and waits to write rw, which 31 holds for reading.
		&waitfor.Wait{Goroutine: base + 30, Kind: waitfor.KindLock, Lock: rw, HolderKnown: true},
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
	l := class.NewNamed("aggregation_lock", "Mutex", 1)
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
	assert.Equal(t, "has exited", waitfor.RoutineState(d, base+99))
}
