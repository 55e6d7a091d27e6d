package gls_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
)

// The handshake under each fence. Owners hammer their own states
// (Get/Push/Pop/PassOnce/Rest) while two trimmers call gls.Trim in a loop;
// owners sit at home slots, at probe offsets and in the overflow. An
// owner never sees its busy state taken, nor loses the last Once it
// passed unless it is marked forgetful. (Without a fence it fails within
// seconds.)
func TestHandshakeUnderEachFence(t *testing.T) {
	if raceEnabled {
		// The marks are atomic stores there, so no fence is tested, and
		// the detector checks the rest of the handshake in the other
		// tests; this many rounds would take minutes under it.
		t.Skip("the fence is what this tests, and the race build needs none")
	}
	for _, stw := range []bool{false, true} {
		name := "membarrier"
		if stw {
			name = "stop-the-world"
		} else if !gls.Expedited() {
			continue
		}
		t.Run(name, func(t *testing.T) {
			gls.StopTheWorldFences(stw)
			defer gls.StopTheWorldFences(false)
			stressHandshake(t, 200_000, 2_000)
		})
	}
}

// stressHandshake runs the owners until they have made target rounds and
// the trimmers minTrims trims.
func stressHandshake(t *testing.T, target, minTrims int64) {
	var (
		stop                              atomic.Bool
		enough                            = make(chan struct{})
		closeEnough                       sync.Once
		busyLost, wrong, onceLost, rounds atomic.Int64
		trims                             atomic.Int64
		spin                              atomic.Int64
		maxOv                             atomic.Int64
	)
	_, _, reclaimed0, _ := gls.Stats()
	fences0 := gls.Fences()
	owner := func() {
		id := goid.ID()
		var seq uint64
		var prev uint64
		i := 0
		for !stop.Load() {
			i++
			g := gls.Get(id)
			if g.ID() != id || !g.Busy() || g.Len() != 0 {
				wrong.Add(1)
			}
			if seq == 0 {
				seq = g.Seq()
			} else if g.Seq() != seq {
				// a revived state keeps its number; a new one is forgetful,
				// since its remnant remembered a Once (always here)
				if !g.Forgetful() {
					wrong.Add(1)
				}
				seq = g.Seq()
			}
			if prev != 0 && !g.PassOnce(prev) && !g.Forgetful() {
				onceLost.Add(1)
			}
			g.Push(held.Entry{Elem: uint64(i)})
			for k := range 4 {
				if gls.Find(id) != g || !g.Busy() {
					busyLost.Add(1)
				}
				if k == 1 && i%16 == 0 {
					runtime.Gosched() // migrate between threads while busy
				}
			}
			if g.Len() != 1 || g.Entries()[0].Elem != uint64(i) {
				busyLost.Add(1)
			}
			g.Pop()
			prev = uint64(id)<<20 | uint64(i&0xfffff) | 1
			g.PassOnce(prev)
			g.Rest()
			// Rest then wake at once: Mine's Woken path, racing the take.
			g2 := gls.Get(id)
			if gls.Find(id) != g2 || g2.ID() != id {
				busyLost.Add(1)
			}
			g2.Rest()
			if rounds.Add(1) >= target && trims.Load() >= minTrims {
				closeEnough.Do(func() { close(enough) })
			}
			// Idle a little, so that trims list the state idle and the owner
			// wakes while the take is announced and fenced.
			for range (i * 7919) % 512 {
				spin.Add(1)
			}
		}
	}
	var wg sync.WaitGroup
	// 96 owners at home (more than trimFloor, so trims drop table states).
	for range 96 {
		wg.Go(owner)
	}
	// 24 owners in one probe window: 8 in the table at offsets, 16 in the
	// overflow. Spawn throwaway goroutines until ids fall in the window.
	var spawned sync.WaitGroup
	base := (goid.ID() + 4096) &^ 8191
	var inWindow atomic.Int64
	for inWindow.Load() < 24 {
		var batch sync.WaitGroup
		for range 512 {
			batch.Go(func() {
				id := goid.ID()
				if id&8191 < 2 && id > base && inWindow.Add(1) <= 24 {
					spawned.Add(1)
					wg.Go(func() { defer spawned.Done(); owner() })
				}
			})
		}
		batch.Wait()
	}
	// 2 trimmers.
	var tw sync.WaitGroup
	for range 2 {
		tw.Go(func() {
			for !stop.Load() {
				gls.Trim()
				if trims.Add(1)%64 == 0 {
					if _, ov, _, _ := gls.Stats(); int64(ov) > maxOv.Load() {
						maxOv.Store(int64(ov))
					}
				}
			}
		})
	}
	<-enough
	stop.Store(true)
	wg.Wait()
	tw.Wait()
	_, ov, reclaimed, _ := gls.Stats()
	t.Logf("GOMAXPROCS=%d rounds=%d trims=%d fences=%d reclaimed=%d overflow=%d maxOverflowSeen=%d",
		runtime.GOMAXPROCS(0), rounds.Load(), trims.Load(),
		gls.Fences()-fences0, reclaimed-reclaimed0, ov, maxOv.Load())
	if reclaimed == reclaimed0 {
		t.Error("nothing reclaimed: raced nothing")
	}
	if n := busyLost.Load(); n != 0 {
		t.Errorf("%d busy states taken from their owners", n)
	}
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d wrong states given", n)
	}
	if n := onceLost.Load(); n != 0 {
		t.Errorf("%d remnants lost the last Once passed (not forgetful)", n)
	}
}
