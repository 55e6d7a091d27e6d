//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Rule R24: a lock kept until its goroutine exited (a file locked for good
// on close), which no release ever showed to gate, is no evidence that
// the paths taken under it exclude each other. Once the exit check sees
// that goroutine gone, the lock holds no cycle back.

// keepUntilExit runs f in a goroutine that locks g first and exits
// without unlocking it, and returns once the exit check has seen g left
// held by the exited goroutine.
func keepUntilExit(t *testing.T, g *lockorder.Mutex, name string, f func()) {
	t.Helper()
	run(func() {
		g.Lock()
		f()
	})
	awaitKept(t, name)
}

// A hold handed off after the exit check took its lock out of the gates:
// the sightings under it did exclude, and the lock goes back into their
// gates, so that b -> a, later taken under g, is held back as before.
func TestAKeptGateHandedOffAfterTheCheckIsAGateAgain(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24h-a"), lockorder.NewMutex("r24h-b")
	keepUntilExit(t, g, t.Name(), func() { lockAB(a, b) })
	require.Empty(t, only(lockorder.KindCycle))
	g.Unlock() // the hand-off, after the check
	run(func() { g.Lock(); lockAB(b, a); g.Unlock() })
	assert.Empty(t, only(lockorder.KindCycle), "both orders held g")
	runtime.KeepAlive(g)
}

// One goroutine takes both orders under a lock it keeps until it exits:
// nobody else ever contends for g, so g is no gate.
func TestAGateNobodyContendsForHoldsNoCycleBack(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24s-a"), lockorder.NewMutex("r24s-b")
	keepUntilExit(t, g, t.Name(), func() {
		lockAB(a, b)
		lockAB(b, a)
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
	runtime.KeepAlive(g)
}

// The control, the commonest test there is: a transaction lock taken and
// released around each order is a gate, and stays one at exit.
func TestAGateReleasedByItsTakerStaysAGateAtExit(t *testing.T) {
	fresh(t)
	g, other := lockorder.NewMutex(t.Name()), lockorder.NewMutex(t.Name()+"-other")
	a, b := lockorder.NewMutex("r24c-a"), lockorder.NewMutex("r24c-b")
	run(func() {
		g.Lock()
		lockAB(a, b)
		g.Unlock()
		g.Lock()
		lockAB(b, a)
		g.Unlock()
	})
	keepUntilExit(t, other, t.Name()+"-other", func() {}) // an exit check that saw a kept lock
	assert.Empty(t, only(lockorder.KindCycle))
	runtime.KeepAlive(g)
	runtime.KeepAlive(other)
}

// The writers' gate (R7): two RWMutexes written only under g, read in
// both orders. One writer at a time cannot deadlock readers against each
// other; once g turns out kept until exit, its writers are not
// serialized by anything, and the read cycle is reported.
func TestAWritersGateKeptUntilExitHoldsNoReadCycleBack(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	x, y := lockorder.NewRWMutex("r24w-x"), lockorder.NewRWMutex("r24w-y")
	run(func() {
		x.RLock()
		y.RLock()
		y.RUnlock()
		x.RUnlock()
	})
	run(func() {
		y.RLock()
		x.RLock()
		x.RUnlock()
		y.RUnlock()
	})
	keepUntilExit(t, g, t.Name(), func() {
		x.Lock()
		x.Unlock()
		y.Lock()
		y.Unlock()
		require.Empty(t, only(lockorder.KindCycle), "every write so far holds g")
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
	runtime.KeepAlive(g)
}

// Found by review: correct programs R24 must not fail, and its count.

// R20's counter-example, "the commonest test there is", followed by a
// Close that locks the database's lock for good. One goroutine takes a
// transaction lock g around a -> b, then around b -> a, then keeps g
// (closed). No run of this program can deadlock on a/b: every a/b path
// holds g. Its releases around each order showed it to gate: it stays one.
func TestATransactionLockThenKeptAtCloseStaysAGate(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24r1-a"), lockorder.NewMutex("r24r1-b")
	run(func() {
		g.Lock()
		lockAB(a, b)
		g.Unlock()
		g.Lock()
		lockAB(b, a)
		g.Unlock()
		g.Lock() // Close: the database stays locked for good
	})
	awaitKept(t, t.Name())
	assert.Empty(t, only(lockorder.KindCycle), "g serialized both orders; keeping it at close cannot make them deadlock")
	runtime.KeepAlive(g)
}

// The same with workers in goroutines of their own, and the closer in a
// third: the shape of lockordertest runs where one test uses a database
// and a later one closes it.
func TestWorkersThenACloserKeepingTheGateIsNoCycle(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24r2-a"), lockorder.NewMutex("r24r2-b")
	run(func() { g.Lock(); lockAB(a, b); g.Unlock() })
	run(func() { g.Lock(); lockAB(b, a); g.Unlock() })
	run(func() { g.Lock() }) // Close
	awaitKept(t, t.Name())
	assert.Empty(t, only(lockorder.KindCycle))
	runtime.KeepAlive(g)
}

// The bbolt database pattern of TestWritersGateDatabasePattern (meta and
// mmap's read cycle, held back because every write of mmap holds rw),
// followed by a Close that keeps rw. No write of mmap can come after the
// close, and every one before held rw: the read cycle cannot deadlock.
func TestADatabaseClosedForGoodKeepsItsWritersGate(t *testing.T) {
	fresh(t)
	name := t.Name()
	rw, meta, mmap := lockorder.NewMutex(name), lockorder.NewMutex("r24r3-meta"), lockorder.NewRWMutex("r24r3-mmap")
	for range 3 {
		run(dbBeginTx(meta, mmap))
		run(dbCommit(rw, meta, mmap))
	}
	require.Empty(t, lockorder.Violations())
	run(func() { rw.Lock() }) // Close
	awaitKept(t, name)
	assert.Empty(t, only(lockorder.KindCycle), "every write of mmap held rw, and none can come after the close")
	runtime.KeepAlive(rw)
}

// A hand-off across the exit check: P takes g and exits, and g is handed
// to the test goroutine, which unlocks it (sync allows it; R14). An exit
// check that runs in between (a VerifyNone of an earlier test, a parallel
// test's) must not take g out of a -> b's gate: that sighting held g and
// released it. g then serializes b -> a as before.
func TestAGateTakenAgainAndHandedOffAcrossTheCheckStaysAGate(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24r4-a"), lockorder.NewMutex("r24r4-b")
	run(func() { g.Lock(); lockAB(a, b); g.Unlock() })
	run(func() { g.Lock() }) // taken, to be released by another goroutine
	awaitKept(t, t.Name())
	require.Empty(t, only(lockorder.KindCycle))
	g.Unlock() // the hand-off
	run(func() { g.Lock(); lockAB(b, a); g.Unlock() })
	assert.Empty(t, only(lockorder.KindCycle), "both orders held g")
	runtime.KeepAlive(g)
}

// ReportBlocked returns how many violations it recorded: the cycles R24
// reports count, as they are filtered, like the rest.
func TestReportBlockedCountsTheCyclesOfKeptGates(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24r5-a"), lockorder.NewMutex("r24r5-b")
	run(func() {
		g.Lock()
		lockAB(a, b)
		lockAB(b, a)
	})
	n := awaitKept(t, t.Name())
	require.Len(t, only(lockorder.KindCycle), 1)
	assert.Equal(t, len(only(lockorder.KindCycle))+len(only(lockorder.KindHeldByExited)), n,
		"every violation recorded by the exit checks is counted in what they returned")
	runtime.KeepAlive(g)
}

// awaitKept calls ReportBlocked until it has reported class name left held
// by an exited goroutine, and returns the sum of what the calls returned.
func awaitKept(t *testing.T, name string) int {
	t.Helper()
	n := 0
	seen := pollBusy(func() bool {
		n += lockorder.ReportBlocked(0)
		for _, v := range only(lockorder.KindHeldByExited) {
			if len(v.Locks) > 0 && v.Locks[0].Class == name {
				return true
			}
		}
		return false
	})
	if !seen {
		t.Fatal("the exit check never saw the goroutine that kept the lock exit")
	}
	return n
}

// The cost of R24 at each exit check after the first: a lock kept by an
// exited goroutine and still reachable stays in its state, and every later
// check finds it again; it must not walk every edge for it again
// (graph.Ungate), or k such locks and e edges cost k·e per VerifyNone.
func BenchmarkExitCheckWithKeptLocks(b *testing.B) {
	for _, k := range []int{1, 64, 512} {
		b.Run("kept="+strconv.Itoa(k), func(b *testing.B) {
			lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
			lockorder.Reset()
			defer lockorder.Reset()
			const n = 200 // n·(n-1)/2 edges, each under g
			g := lockorder.NewMutex("r24bench-g")
			ls := make([]*lockorder.Mutex, n)
			for i := range ls {
				ls[i] = lockorder.NewMutex("r24bench-" + strconv.Itoa(i))
			}
			run(func() {
				g.Lock()
				for i := range ls {
					for j := i + 1; j < n; j++ {
						lockAB(ls[i], ls[j])
					}
				}
				g.Unlock()
			})
			kept := make([]*lockorder.Mutex, k)
			for i := range kept {
				kept[i] = lockorder.NewMutex("r24bench-kept")
				run(func() { kept[i].Lock() })
			}
			lockorder.ReportBlockedExcept(0, false, nil) // the first check: ungates, drops nothing (reachable)
			b.ResetTimer()
			for range b.N {
				lockorder.ReportBlockedExcept(0, false, nil)
			}
			b.StopTimer()
			runtime.KeepAlive(kept)
			runtime.KeepAlive(ls)
		})
	}
}
