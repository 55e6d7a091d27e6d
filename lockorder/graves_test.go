//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/lockorder"
)

// A goroutine that exits holding a lock of its own leaves its state busy
// for good: the dump that frees states of exited goroutines frees it too,
// keeping its holds as graves (held.Bury), which refer to their locks
// weakly, at most held.MaxGraves of them (RULES.md R17, R24).

// abandon runs n goroutines one after another, each locking a fresh
// Mutex and exiting without unlocking it. keep, if not nil, gets the
// mutexes; otherwise they are garbage once their goroutines exit.
//
//go:noinline
func abandon(n int, keep *[]*lockorder.Mutex) {
	for range n {
		done := make(chan struct{})
		go func() {
			defer close(done)
			mu := new(lockorder.Mutex)
			mu.Lock()
			if keep != nil {
				*keep = append(*keep, mu)
			}
		}()
		<-done
	}
}

// heapAlloc returns the bytes of live heap objects, after a collection.
func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// collectUntilBelow collects (each collection runs gls's trim, which frees
// the states of exited goroutines and the graves of collected locks) until
// the heap is at most limit bytes, for a few seconds at most, and returns
// the last heap size. The heap only shrinks here: a slow machine takes
// longer, it does not fail.
func collectUntilBelow(limit uint64) uint64 {
	var h uint64
	for range 300 {
		if h = heapAlloc(); h <= limit {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return h
}

// 20,000 goroutines each leave a fresh lock held and exit; nothing else
// reaches the locks. Everything they left is collectable: the heap goes
// back to within 64 bytes a lock of where it was. It kept about 1 KiB a
// lock (the goroutine's state, the lock's identity and class) for good.
func TestAbandonedUnreachableLocksAreCollected(t *testing.T) {
	fresh(t)
	const n, perLock = 20_000, 64
	before := heapAlloc()
	abandon(n, nil)
	after := collectUntilBelow(before + n*perLock/4)
	grew := int64(after) - int64(before)
	t.Logf("retained %d bytes after %d abandoned locks: %.1f a lock", grew, n, float64(grew)/n)
	assert.LessOrEqual(t, grew, int64(n*perLock), "the states and locks of exited goroutines are kept")
	kept, _ := held.Graves()
	assert.Less(t, kept, held.MaxGraves, "graves of collected locks are dropped")
}

// The same with the locks kept reachable, more of them than there is room
// for graves: the goroutines' states are freed, the graves stay at most
// held.MaxGraves, and those dropped are counted.
func TestKeptHoldsOfExitedGoroutinesAreCapped(t *testing.T) {
	fresh(t)
	const n = held.MaxGraves + 2_000
	dropped := lockorder.ExitedHoldsDropped()
	keep := make([]*lockorder.Mutex, 0, n)
	abandon(n, &keep)
	ok := collectUntil(func() bool {
		states, _, _, _ := gls.Stats()
		return states < 1024 && lockorder.ExitedHoldsDropped() > dropped
	})
	states, _, _, _ := gls.Stats()
	kept, _ := held.Graves()
	t.Logf("states %d, graves %d, dropped %d", states, kept, lockorder.ExitedHoldsDropped()-dropped)
	assert.True(t, ok, "the states of the exited goroutines are freed, and the oldest holds dropped")
	assert.LessOrEqual(t, kept, held.MaxGraves)
	runtime.KeepAlive(keep)
}

// buryExited abandons enough unreachable locks that the next trims take a
// goroutine dump, and collects until the state of the goroutine that took
// l's hold is freed: its holds are graves now.
func buryExited(t *testing.T, holder func() int64) {
	t.Helper()
	gid := holder()
	require.NotZero(t, gid)
	abandon(400, nil)
	require.True(t, collectUntil(func() bool { gls.Trim(); return gls.Find(gid) == nil }),
		"the state of the exited goroutine %d is never freed", gid)
}

// A lock left held, still reachable, whose goroutine's state was freed is
// reported by the exit check all the same, from its grave, and a waiter
// blocked behind it by the wait-for monitor.
func TestALockLeftHeldIsReportedFromItsGrave(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("graves-left")
	leaveLocked(m)
	buryExited(t, func() int64 { return lockorder.HolderOf(m) })
	lockorder.ReportBlocked(0)
	var found bool
	for _, v := range only(lockorder.KindHeldByExited) {
		if lockClasses(v)[0] == "graves-left" {
			found = true
			assert.True(t, v.Expected, "nobody waits for it yet")
		}
	}
	require.True(t, found, "the exit check reports the lock left held")

	waited := lockInTurn(m)
	require.Eventually(t, func() bool {
		for _, v := range only(lockorder.KindHeldByExited) {
			if !v.Expected && lockClasses(v)[0] == "graves-left" {
				return true
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond, "the waiter behind the lock is reported")
	m.Unlock() // on the exited goroutine's behalf
	<-waited
}

// R24 on a lock kept until exit that became garbage: a lock under which
// order edges were seen may be in their gates, so its grave keeps it
// until the exit check has taken it out of them. The cycle its gate held
// back is reported.
func TestAGarbageKeptGateIsTakenOutOfGatesFromItsGrave(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("graves-r24-a"), lockorder.NewMutex("graves-r24-b")
	var gid int64
	func() {
		g := new(lockorder.Mutex)
		run(func() {
			g.Lock()
			lockAB(a, b)
			lockAB(b, a)
		})
		gid = lockorder.HolderOf(g)
	}()
	require.Empty(t, only(lockorder.KindCycle), "both orders held g")
	buryExited(t, func() int64 { return gid })
	for range 3 {
		runtime.GC() // g would be collected, were it not pinned
	}
	lockorder.ReportBlocked(0)
	assert.Len(t, only(lockorder.KindCycle), 1, "nobody else ever contended for g: no gate")
}
