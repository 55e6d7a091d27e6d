//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/lockorder"
)

// twoKeepers: P1 keeps g (edge a->b under it) and exits; its grave
// watches g. g is released unseen (ModeTrace), then P2 takes g in check
// mode (holds: Unbury), takes b->a under it and exits holding it. With
// the collector off, one Trim buries P2 (watch g for P2) and then prunes
// P1's grave, no longer valid, whose unwatch deletes watched[weak(g)]:
// P2's entry. If collect, g is then dropped and collected.
func twoKeepers(t *testing.T, collect, pruneFirst bool) {
	fresh(t)
	a, b := lockorder.NewMutex("keepers-a"), lockorder.NewMutex("keepers-b")
	var keep *lockorder.Mutex
	func() {
		g := new(lockorder.Mutex)
		var gid1, gid2 int64
		run(func() { g.Lock(); lockAB(a, b) })
		gid1 = lockorder.HolderOf(g)
		buryExited(t, func() int64 { return gid1 })

		old := debug.SetGCPercent(-1) // no trim between P2's Unbury and its burial
		defer debug.SetGCPercent(old)
		lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
		run(g.Unlock) // unseen release
		lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
		run(func() { g.Lock(); lockAB(b, a) })
		gid2 = lockorder.HolderOf(g)
		require.NotEqual(t, gid1, gid2)
		require.Empty(t, only(lockorder.KindCycle), "both orders under g")
		if pruneFirst {
			runtime.GC() // its trim prunes P1's stale grave before P2 is buried
			gls.Trim()
		}
		// The trim's dump must find P2 exited, not about to.
		waitUntil(t, func() bool { return !goroutineAlive(gid2) }, "P2 exited")
		abandon(max(400, 2*runtime.NumGoroutine()+300), nil)
		gls.Trim() // Bury(P2, ...) then PruneGraves: P1's stale grave unwatches g
		require.Nil(t, gls.Find(gid2), "P2's state is freed by the one trim")
		if !collect {
			keep = g
		}
	}()
	for range 3 {
		runtime.GC()
	}
	lockorder.ReportBlocked(0)
	assert.Len(t, only(lockorder.KindCycle), 1,
		"g kept by exited P2, never shown to gate: R24 takes it out (collect=%v)", collect)
	runtime.KeepAlive(keep)
}

// Control: g stays reachable, its grave is found by the exit check.
func TestTwoKeepersOfAGateReachable(t *testing.T) { twoKeepers(t, false, false) }

// g collected while still P2's: P1's stale grave, pruned, must not end
// P2's watch of g, so that R24 is applied to g from its dead gate.
func TestTwoKeepersOfAGateCollected(t *testing.T) { twoKeepers(t, true, false) }

// Control: the same with P1's stale grave pruned before P2's burial: P2's
// watch survives, and g's id is taken out of gates from deadGates.
func TestTwoKeepersOfAGateCollectedPrunedFirst(t *testing.T) { twoKeepers(t, true, true) }

// Keepers of gate locks exit holding them while other goroutines hand them
// off and new keepers take them, with trims (Bury, PruneGraves) and
// collections running all along: run with -race. At the end every lock is
// released: nothing is reported held by an exited goroutine, and no cycle
// (one order only).
func TestUnburyRacesBurial(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("keepers-race-a"), lockorder.NewMutex("keepers-race-b")
	const k, rounds = 64, 40
	gs := make([]*lockorder.Mutex, k)
	for i := range gs {
		gs[i] = lockorder.NewMutex("keepers-race-g")
	}
	stop := make(chan struct{})
	trimmed := make(chan struct{})
	go func() {
		defer close(trimmed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			gls.Trim()
			runtime.GC()
		}
	}()
	for r := range rounds {
		done := make(chan struct{}, k)
		for i := range gs {
			go func() {
				defer func() { done <- struct{}{} }()
				run(func() { gs[i].Lock(); lockAB(a, b) }) // exits holding gs[i]
				if r%4 == 0 {
					abandon(8, nil) // busy states, so trims dump
				}
				run(gs[i].Unlock) // hand-off
			}()
		}
		for range gs {
			<-done
		}
	}
	close(stop)
	<-trimmed
	lockorder.ReportBlocked(0)
	assert.Empty(t, only(lockorder.KindCycle))
	assert.Empty(t, heldByExitedOf("keepers-race-g"), "released locks reported held by exited goroutines")
}
