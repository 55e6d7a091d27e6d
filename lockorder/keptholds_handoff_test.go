//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Rule R24 around hand-offs, mode changes and repeated exit checks: a
// kept lock handed off gates again, and nothing R24 does may hide a cycle
// that was reported before it, or report one its gate excludes. Found by
// review.

// A hand-off puts g back only into edges seen no more since the check:
// Q's sighting of a -> b, made after the check with nothing held, cannot
// narrow a gate that lost g already, and must keep g out, so that Q (a,
// then b, holding nothing) and R (g, b, then a) are reported, as they
// were before R24.
func TestARegateSkipsAnEdgeSeenSinceWithoutTheKeptLock(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24v-a"), lockorder.NewMutex("r24v-b")
	keepUntilExit(t, g, t.Name(), func() { lockAB(a, b) }) // P: a -> b under g, kept
	run(func() { lockAB(a, b) })                           // Q: a -> b, nothing held
	g.Unlock()                                             // the hand-off: regate
	run(func() { g.Lock(); lockAB(b, a); g.Unlock() })     // R: b -> a under g
	assert.Len(t, only(lockorder.KindCycle), 1,
		"Q took a -> b without g after the check: a -> b is not gated by g, and Q and R can deadlock")
	runtime.KeepAlive(g)
}

// The same with no R24 at all: Q's sighting narrows a -> b's gate {g} to
// {}.
func TestAGateLostToASightingWithoutItIsReported(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24vc-a"), lockorder.NewMutex("r24vc-b")
	run(func() { g.Lock(); lockAB(a, b); g.Unlock() })
	run(func() { lockAB(a, b) })
	run(func() { g.Lock(); lockAB(b, a); g.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1)
	runtime.KeepAlive(g)
}

// A transaction lock every holder hands off (locked by the caller,
// unlocked by the goroutine that finishes the job), then locked for good
// by a closer. Each order was taken while g was held, before its hand-off:
// g excluded them (the second Lock waits for the first hold's unlock). A
// hand-off shows g to gate as a release by its taker does.
func TestAHandedOffGateThenKeptAtCloseStaysAGate(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24ho-a"), lockorder.NewMutex("r24ho-b")
	run(func() { g.Lock(); lockAB(a, b) })
	run(func() { g.Unlock() }) // the job's goroutine finishes and unlocks
	run(func() { g.Lock(); lockAB(b, a) })
	run(func() { g.Unlock() })
	require.Empty(t, only(lockorder.KindCycle))
	run(func() { g.Lock() }) // Close: kept for good
	awaitKept(t, t.Name())
	assert.Empty(t, only(lockorder.KindCycle), "every a/b order held g; the closer cannot make them deadlock")
	runtime.KeepAlive(g)
}

// eng.ungated records a kept lock still reachable at the check, for
// regate, up to maxUngated (1024). A record goes with its lock: a long
// test binary whose tests each close a database (its lock kept for good,
// reachable at that test's VerifyNone) must not fill the table and turn
// R24 off.
func TestRecordsOfCollectedKeptLocksAreDropped(t *testing.T) {
	if testing.Short() {
		t.Skip("1024 goroutines and exit checks")
	}
	fresh(t)
	func() {
		kept := make([]*lockorder.Mutex, 1024)
		for i := range kept {
			kept[i] = lockorder.NewMutex("r24full-kept")
			run(func() { kept[i].Lock() })
		}
		pollBusy(func() bool {
			lockorder.ReportBlockedExcept(0, false, nil) // all reachable: recorded
			return lockorder.UngatedRecords() >= len(kept)
		})
		t.Logf("records after the first check: %d", lockorder.UngatedRecords())
		runtime.KeepAlive(kept)
	}()
	// Garbage now: the next checks drop their holds from the exited states.
	lockorder.ReportBlockedExcept(0, false, nil)
	lockorder.ReportBlockedExcept(0, false, nil)
	t.Logf("records once the locks are garbage: %d", lockorder.UngatedRecords())

	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24full-a"), lockorder.NewMutex("r24full-b")
	keepUntilExit(t, g, t.Name(), func() {
		lockAB(a, b)
		lockAB(b, a)
	})
	assert.Len(t, only(lockorder.KindCycle), 1, "R24's own shape, after 1024 kept locks that are gone")
	runtime.KeepAlive(g)
}

// A hand-off inside the exit check's own window: ReportBlockedExcept
// reads the kept holds (KeptHolds), then runs ReachableDeadHolds (a full
// runtime.GC), and only then takes eng.mu in ungateKept, which looks at
// the hold again: a goroutine (a parallel test) that unlocks g in that
// window shows g to gate, and R's b -> a under g stays held back.
func TestAHandOffDuringTheExitCheckKeepsTheGate(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24win-a"), lockorder.NewMutex("r24win-b")
	run(func() { g.Lock(); lockAB(a, b) }) // P keeps g, exits
	handed := false
	pollBusy(func() bool {
		lockorder.R24CheckWithHook(func(kept int) {
			if kept > 0 {
				g.Unlock() // the hand-off, in the window
				handed = true
			}
		})
		return handed
	})
	require.True(t, handed, "the check never saw P exit")
	run(func() { g.Lock(); lockAB(b, a); g.Unlock() })
	assert.Empty(t, only(lockorder.KindCycle), "g was handed off, not kept: both orders held g")
	runtime.KeepAlive(g)
}

// The writers' gate variant of TestARegateSkipsAnEdgeSeenSinceWithoutTheKeptLock:
// W(x) = {g, h} (P's write of x, under both); R24 leaves {h}; Q writes x
// under h alone after the check, which cannot narrow {h}; the hand-off
// must not put g back (a writers' gate is not), since reader1 (y read,
// waits to read x behind Q's queued write, Q holding h) and R (g, x read,
// waits to write y behind reader1's read) deadlock with Q.
func TestAWritersGateIsNotPutBackByAHandOff(t *testing.T) {
	fresh(t)
	g, h := lockorder.NewMutex(t.Name()), lockorder.NewMutex(t.Name()+"-h")
	x, y := lockorder.NewRWMutex("r24wv-x"), lockorder.NewRWMutex("r24wv-y")
	run(func() { y.RLock(); x.RLock(); x.RUnlock(); y.RUnlock() }) // reader1
	keepUntilExit(t, g, t.Name(), func() { h.Lock(); x.Lock(); x.Unlock(); h.Unlock() })
	run(func() { h.Lock(); x.Lock(); x.Unlock(); h.Unlock() }) // Q: a write of x without g
	g.Unlock()                                                 // the hand-off: regate
	run(func() {
		g.Lock()
		x.RLock()
		y.Lock()
		y.Unlock()
		x.RUnlock()
		g.Unlock()
	}) // R
	assert.Len(t, only(lockorder.KindCycle), 1, "Q wrote x without g: W(x) does not hold g")
	runtime.KeepAlive(g)
	runtime.KeepAlive(h)
}

// A Configure that changes the mode word (here the held profile) while a
// goroutine holds g forgets its holds (R23's limit); its own g.Unlock then
// takes unlockOther, a hand-off, which shows g to gate: a transaction lock
// used this way twice and then kept at close stays a gate.
func TestAGateReleasedAcrossAConfigureThenKeptStaysAGate(t *testing.T) {
	fresh(t)
	defer lockorder.Configure(lockorder.WithHeldProfile(false))
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24ms-a"), lockorder.NewMutex("r24ms-b")
	run(func() {
		g.Lock()
		lockAB(a, b)
		lockorder.Configure(lockorder.WithHeldProfile(true))
		g.Unlock()
	})
	lockorder.Configure(lockorder.WithHeldProfile(false))
	run(func() {
		g.Lock()
		lockAB(b, a)
		lockorder.Configure(lockorder.WithHeldProfile(true))
		g.Unlock()
	})
	lockorder.Configure(lockorder.WithHeldProfile(false))
	require.Empty(t, only(lockorder.KindCycle), "g gates both orders")
	run(func() { g.Lock() }) // Close
	awaitKept(t, t.Name())
	assert.Empty(t, only(lockorder.KindCycle), "g was released by its taker around each order")
	runtime.KeepAlive(g)
}

// Under -race, the exit check reads an exited goroutine's stack
// (held.entriesOfExited) out of the detector's sight: a goroutine that
// exits holding a lock, with nothing (a channel, a WaitGroup) ordering its
// exit before the check, must not make VerifyNone fail the user's -race
// run with a DATA RACE in syncwatch. (runtime.slicecopy checks races
// itself, whatever //go:norace says.)
func TestTheExitCheckReadsExitedStacksWithoutARace(t *testing.T) {
	fresh(t)
	g, a := lockorder.NewMutex(t.Name()), lockorder.NewMutex(t.Name()+"-a")
	go func() { g.Lock(); a.Lock(); a.Unlock() }()
	assert.True(t, pollBusy(func() bool {
		lockorder.ReportBlockedExcept(0, false, nil)
		return len(only(lockorder.KindHeldByExited)) > 0
	}), "the exit check sees the goroutine that left g held exit")
	runtime.KeepAlive(g)
}
