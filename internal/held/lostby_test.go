package held_test

import (
	"runtime"
	"testing"

	"github.com/syncwatch/syncwatch/internal/chain"
	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
)

// Proving.lostBy stays bounded, as byFrom does in
// TestByFromGrowsWithHandedOffLocks. A goroutine keeps a Mutex M for good
// and, per request, read-locks a new RWMutex R_i and takes more locks
// under it than read edges may wait (held.MaxWaiting): the Wait of an
// acquisition whose edge M->x waits is pushed out while R_i stands, so
// Proving.lose files the acquisition in lostBy[R_i.ID]. R_i's read hold
// is then ended by another goroutine (a hand-off, R13), so the goroutine
// never calls ReadReleased(R_i.ID). The acquisitions leave Proving past
// MaxProving (HoldEdges retires them): they must leave lostBy then, or it
// keeps one map key, with its retired acquisition, per request, for as
// long as the goroutine lives.
func TestLostByStaysBoundedWithHandedOffReadLocks(t *testing.T) {
	g := held.New(7, false)
	m, to := class.New(nil, kind.Mutex, 1), class.New(nil, kind.Mutex, 2)
	heldBy(7, m)
	heap := func() int64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	var rs []*class.Lock // the read locks, until handed off
	i := 0
	round := func(n int) {
		for range n {
			r := class.New(nil, kind.RWMutex, uintptr(i+3))
			key := chain.Key(i + 100)
			i++
			g.HoldEdges(edgesOf(key, to, m), 0) // M -> to waits on M, kept
			g.Hold(held.Wait{Key: key, To: to, Srcs: []held.Src{{Lock: r, Gen: r.ReadGen()}}})
			rs = append(rs, r)
			if len(rs) > held.MaxWaiting+1 {
				rs[0].BumpReadGen() // its Wait pushed out already: now handed off
				rs = rs[1:]
			}
		}
	}
	round(10_000) // past MaxProving: the steady state
	before := heap()
	round(200_000)
	grown := heap() - before
	t.Logf("heap grown by %d KiB over 200k handed-off read locks; %d edges wait", grown>>10, g.ProvingEdges())
	if grown > 4<<20 {
		t.Fatalf("Proving grew by %d KiB: bounded by MaxProving and MaxWaiting, it should not grow", grown>>10)
	}
	runtime.KeepAlive(g)
}
