//go:build !syncwatch_off

package lockorder_test

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
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

// goroutineAlive reports whether goroutine id has not exited. (A
// goroutine that run waited for may not have: it closes its channel, then
// returns, and on a loaded machine may wait to run again in between.)
func goroutineAlive(id int64) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Contains(buf, []byte(fmt.Sprintf("goroutine %d [", id)))
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
// the heap is at most limit bytes, for pollLimit at most, and returns the
// last heap size. The heap only shrinks here: a slow machine takes
// longer, it does not fail.
func collectUntilBelow(limit uint64) uint64 {
	var h uint64
	pollBusy(func() bool { h = heapAlloc(); return h <= limit })
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
	// The heap can come down before the trims have dropped every grave
	// (CI, Go 1.27): collect until they have.
	kept, _ := held.Graves()
	pollBusy(func() bool {
		if kept, _ = held.Graves(); kept < held.MaxGraves {
			return true
		}
		runtime.GC()
		return false
	})
	assert.Less(t, kept, held.MaxGraves, "graves of collected locks are dropped")
}

// The same with the locks kept reachable, more of them than there is room
// for graves: the goroutines' states are freed, the graves come down to
// held.MaxGraves once they have lived through a collection, and those
// dropped are counted.
func TestKeptHoldsOfExitedGoroutinesAreCapped(t *testing.T) {
	fresh(t)
	const n = held.MaxGraves + 2_000
	dropped := lockorder.ExitedHoldsDropped()
	keep := make([]*lockorder.Mutex, 0, n)
	abandon(n, &keep)
	ok := collectUntil(func() bool {
		states, _, _, _ := gls.Stats()
		kept, _ := held.Graves()
		return states < 1024 && lockorder.ExitedHoldsDropped() > dropped && kept <= held.MaxGraves
	})
	states, _, _, _ := gls.Stats()
	kept, _ := held.Graves()
	t.Logf("states %d, graves %d, dropped %d", states, kept, lockorder.ExitedHoldsDropped()-dropped)
	assert.True(t, ok, "the states of the exited goroutines are freed, the oldest holds dropped, the graves capped")
	runtime.KeepAlive(keep)
}

// buryExited abandons enough unreachable locks that the next trims take a
// goroutine dump, and collects until the state of the goroutine that took
// l's hold is freed: its holds are graves now. A dump needs the busy
// states to outnumber the goroutines by max(256, NumGoroutine): 2×
// NumGoroutine+300 exited holders are enough, whatever earlier tests left
// parked.
func buryExited(t *testing.T, holder func() int64) {
	t.Helper()
	gid := holder()
	require.NotZero(t, gid)
	// A trim's dump frees it only if it finds it exited: the abandoned
	// states it buries first would leave later trims nothing to dump for.
	waitUntil(t, func() bool { return !goroutineAlive(gid) }, "the holder exited")
	abandon(max(400, 2*runtime.NumGoroutine()+300), nil)
	require.True(t, collectUntil(func() bool { gls.Trim(); return gls.Find(gid) == nil }),
		"the state of the exited goroutine %d is never freed", gid)
}

// A lock left held, still reachable, whose goroutine's state was freed is
// reported by the exit check all the same, from its grave, and a waiter
// blocked behind it by the wait-for monitor.
func TestALockLeftHeldIsReportedFromItsGrave(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("graves-left")
	leaveLocked(t, m)
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
// order edges were seen may be in their gates, so its grave watches it,
// and once it is collected the exit check takes its id out of them. The
// cycle its gate held back is reported.
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
		runtime.GC() // g is collected
	}
	lockorder.ReportBlocked(0)
	assert.Len(t, only(lockorder.KindCycle), 1, "nobody else ever contended for g: no gate")
}

// heldByExitedOf returns the held-by-exited reports of class name.
func heldByExitedOf(name string) []lockorder.Violation {
	var out []lockorder.Violation
	for _, v := range only(lockorder.KindHeldByExited) {
		if len(v.Locks) > 0 && lockClasses(v)[0] == name {
			out = append(out, v)
		}
	}
	return out
}

// abandonBurst abandons n unreachable locks with the collector off, so that
// one dump buries them all at once, as in a program whose goroutines exit
// faster than it collects.
func abandonBurst(n int) {
	old := debug.SetGCPercent(-1)
	abandon(n, nil)
	debug.SetGCPercent(old)
}

// statesFreed collects until the exited goroutines' states are freed.
func statesFreed(t *testing.T) {
	t.Helper()
	require.True(t, collectUntil(func() bool {
		gls.Trim()
		states, _, _, _ := gls.Stats()
		return states < 1024
	}), "the states of exited goroutines are freed")
}

// ExitedHoldsDropped's doc: "A hold whose lock became garbage is not
// counted: it harms no one." A burst of garbage holds larger than the
// cap, buried by one dump while every lock is still reachable from the
// states the last collection saw, is not counted: the cap waits for a
// collection after the burial (held.PruneGraves).
func TestAGarbageBurstIsNotCountedAsDropped(t *testing.T) {
	fresh(t)
	statesFreed(t)
	dropped := lockorder.ExitedHoldsDropped()
	abandonBurst(held.MaxGraves + 1000)
	statesFreed(t)
	collectUntil(func() bool { k, _ := held.Graves(); return k < held.MaxGraves/2 })
	assert.Equal(t, int64(0), lockorder.ExitedHoldsDropped()-dropped,
		"holds of garbage locks counted as forgotten for want of room")
}

// A reachable lock left held, buried first, is not forgotten for a burst
// of garbage holds buried after it, which goes at the next collection.
func TestAReachableHoldSurvivesAGarbageBurst(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("graves-survives")
	leaveLocked(t, m)
	buryExited(t, func() int64 { return lockorder.HolderOf(m) })
	abandonBurst(held.MaxGraves + 1000)
	statesFreed(t)
	lockorder.ReportBlocked(0)
	assert.NotEmpty(t, heldByExitedOf("graves-survives"),
		"a lock left held, still reachable, is not reported: its grave made room for garbage")
	m.Unlock()
}

// Many live goroutines holding locks, through trims: none is buried, and
// no trim dumps.
func TestManyLiveHoldersTakeNoDumpThroughTrims(t *testing.T) {
	fresh(t)
	const n = 10_000
	statesFreed(t)
	ms := make([]*lockorder.Mutex, n)
	release := make(chan struct{})
	var locked, done sync.WaitGroup
	locked.Add(n)
	done.Add(n)
	for i := range ms {
		ms[i] = new(lockorder.Mutex)
		go func(m *lockorder.Mutex) {
			defer done.Done()
			m.Lock()
			locked.Done()
			<-release
			m.Unlock()
		}(ms[i])
	}
	locked.Wait()
	dumps := gls.Dumps()
	for range 20 {
		runtime.GC()
		gls.Trim()
	}
	assert.Equal(t, dumps, gls.Dumps(), "live holders make trims dump")
	for _, m := range ms {
		id := lockorder.HolderOf(m)
		if !assert.NotNil(t, gls.Find(id), "the state of live goroutine %d was freed", id) {
			break
		}
	}
	close(release)
	done.Wait()
	assert.Empty(t, lockorder.Violations())
}

// Live holders alongside more exited ones than there are goroutines: the
// dump frees only the exited, the live keep their states and holds, and
// their own Unlocks report nothing; the exit check reports none of them.
func TestLiveHoldersSurviveADump(t *testing.T) {
	reportDeadlocks(t)
	const n = 3000
	statesFreed(t)
	ms := make([]*lockorder.Mutex, n)
	release := make(chan struct{})
	var locked, done sync.WaitGroup
	locked.Add(n)
	done.Add(n)
	for i := range ms {
		ms[i] = lockorder.NewMutex("graves-live")
		go func(m *lockorder.Mutex) {
			defer done.Done()
			m.Lock()
			locked.Done()
			<-release
			m.Unlock()
		}(ms[i])
	}
	locked.Wait()
	dumps := gls.Dumps()
	abandon(n+1000, nil)
	require.True(t, collectUntil(func() bool { gls.Trim(); return gls.Dumps() > dumps }), "no dump")
	for _, m := range ms {
		id := lockorder.HolderOf(m)
		require.NotZero(t, id)
		require.NotNil(t, gls.Find(id), "the state of live goroutine %d was freed", id)
	}
	lockorder.ReportBlocked(0)
	assert.Empty(t, heldByExitedOf("graves-live"), "a live holder reported as exited")
	after := gls.Dumps()
	for range 10 {
		runtime.GC()
		gls.Trim()
	}
	assert.LessOrEqual(t, gls.Dumps()-after, int64(1), "trims keep dumping")
	close(release)
	done.Wait()
	lockorder.ReportBlocked(0)
	assert.Empty(t, heldByExitedOf("graves-live"))
	for _, v := range lockorder.Violations() {
		if v.Kind != lockorder.KindHeldByExited {
			t.Errorf("unexpected %s: %s", v.Kind, v.Message)
		}
	}
}

// A lock whose exited holder was buried, then released by another
// goroutine (a hand-off): no report, its grave goes, and a later live
// holder is not taken for the exited one.
func TestAHandOffAfterBurialIsNotReported(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("graves-handoff")
	leaveLocked(t, m)
	buryExited(t, func() int64 { return lockorder.HolderOf(m) })
	run(m.Unlock)
	gls.Trim()
	lockorder.ReportBlocked(0)
	assert.Empty(t, heldByExitedOf("graves-handoff"), "released by another goroutine")

	release := make(chan struct{})
	var held, done sync.WaitGroup
	held.Add(1)
	done.Add(1)
	go func() {
		defer done.Done()
		m.Lock()
		held.Done()
		<-release
		m.Unlock()
	}()
	held.Wait()
	lockorder.ReportBlocked(0)
	assert.Empty(t, heldByExitedOf("graves-handoff"), "a live holder")
	close(release)
	done.Wait()
	for _, v := range lockorder.Violations() {
		if v.Kind != lockorder.KindHeldByExited {
			t.Errorf("unexpected %s: %s", v.Kind, v.Message)
		}
	}
}

// Hand-offs racing with the dump that buries their holders (run with
// -race): none is reported once released.
func TestHandOffsRacingBurialAreNotReported(t *testing.T) {
	reportDeadlocks(t)
	const rounds = 30
	ms := make([]*lockorder.Mutex, rounds)
	for i := range ms {
		ms[i] = lockorder.NewMutex("graves-race")
		leaveLocked(t, ms[i])
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for _, m := range ms {
			m.Unlock()
			runtime.Gosched()
		}
	}()
	go func() {
		defer wg.Done()
		for range rounds {
			abandon(300, nil)
			gls.Trim()
		}
	}()
	// The exit check concurrently too.
	for range 3 {
		lockorder.ReportBlocked(0)
	}
	wg.Wait()
	for range 3 {
		runtime.GC()
		gls.Trim()
	}
	lockorder.Reset()
	lockorder.ReportBlocked(0)
	assert.Empty(t, heldByExitedOf("graves-race"))
}

// A read hold left by an exited goroutine, buried, then released by
// another goroutine (R13 bumps the read generation): no report, and a
// writer gets in.
func TestAReadHoldHandedOffAfterBurialIsNotReported(t *testing.T) {
	reportDeadlocks(t)
	rw := lockorder.NewRWMutex("graves-read")
	var gid int64
	run(func() {
		rw.RLock()
		gid = goid.ID()
	})
	buryExited(t, func() int64 { return gid })
	lockorder.ReportBlocked(0)
	assert.NotEmpty(t, heldByExitedOf("graves-read"), "the read hold left is reported from its grave")
	lockorder.Reset()
	run(rw.RUnlock)
	gls.Trim()
	lockorder.ReportBlocked(0)
	assert.Empty(t, heldByExitedOf("graves-read"))
	run(func() { rw.Lock(); rw.Unlock() })
}

// Garbage gates (kept locks R24 takes out of gates) left by exited
// goroutines, with no exit check: their graves watch them without keeping
// them, so they go with their locks and take no room from reachable
// holds.
func TestGarbageGatesAreNotKeptWithoutAnExitCheck(t *testing.T) {
	fresh(t)
	statesFreed(t)
	collectUntil(func() bool { gls.Trim(); k, _ := held.Graves(); return k < 100 })
	k0, _ := held.Graves()
	a := lockorder.NewMutex("graves-gate-a")
	const n = 2000
	for range n {
		run(func() {
			g := new(lockorder.Mutex)
			g.Lock()
			a.Lock()
			a.Unlock()
		})
	}
	abandon(300, nil)
	statesFreed(t)
	for range 20 {
		runtime.GC()
		gls.Trim()
	}
	k, _ := held.Graves()
	t.Logf("graves before %d, after %d garbage gates: %d", k0, n, k)
	assert.Less(t, k-k0, n/2, "graves of garbage gates stay until an exit check")
}

// buryExited with a few hundred goroutines parked (the package's deadlock
// tests leave some): it abandons enough locks to outnumber them by
// max(256, NumGoroutine) all the same.
func TestALockLeftHeldIsBuriedAmongParkedGoroutines(t *testing.T) {
	reportDeadlocks(t)
	park := make(chan struct{})
	defer close(park)
	for range 500 {
		go func() { <-park }()
	}
	m := lockorder.NewMutex("graves-parked")
	leaveLocked(t, m)
	buryExited(t, func() int64 { return lockorder.HolderOf(m) })
	m.Unlock()
}

// The same as TestLongWaitNamesAnExitedReader with the reader's state
// buried first: the long-wait report names it from its grave.
func TestLongWaitNamesABuriedReader(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithLongWait(300 * time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithLongWait(5 * time.Second)) })
	rw := lockorder.NewRWMutex("graves-left-read")
	var gid int64
	run(func() {
		rw.RLock()
		gid = goid.ID()
	})
	buryExited(t, func() int64 { return gid })
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		rw.Lock()
		rw.Unlock()
	}()
	v := awaitKind(t, lockorder.KindLongWait, 10*time.Second)
	assert.Contains(t, v.Detail, "which has exited without unlocking it")
	rw.RUnlock()
	<-wrote
}

// TestAReachableHoldSurvivesAGarbageBurst with a burst under the cap.
func TestAReachableHoldSurvivesASmallGarbageBurst(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("graves-survives-small")
	leaveLocked(t, m)
	buryExited(t, func() int64 { return lockorder.HolderOf(m) })
	collectUntil(func() bool { gls.Trim(); k, _ := held.Graves(); return k < 100 })
	dropped := lockorder.ExitedHoldsDropped()
	abandonBurst(held.MaxGraves - 500)
	statesFreed(t)
	lockorder.ReportBlocked(0)
	assert.NotEmpty(t, heldByExitedOf("graves-survives-small"))
	assert.Equal(t, dropped, lockorder.ExitedHoldsDropped())
	m.Unlock()
}

// Garbage gates exited one by one, collected as they go (no burst): their
// graves go with their locks, and do not push out a reachable hold left
// before them.
func TestAReachableHoldSurvivesGarbageGates(t *testing.T) {
	reportDeadlocks(t)
	m := lockorder.NewMutex("graves-survives-gates")
	leaveLocked(t, m)
	buryExited(t, func() int64 { return lockorder.HolderOf(m) })
	a := lockorder.NewMutex("graves-survives-gates-a")
	for i := range held.MaxGraves + 500 {
		run(func() {
			g := new(lockorder.Mutex)
			g.Lock()
			a.Lock()
			a.Unlock()
		})
		if i%200 == 199 {
			runtime.GC()
			gls.Trim()
		}
	}
	statesFreed(t)
	k, dropped := held.Graves()
	t.Logf("graves %d, dropped %d", k, dropped)
	lockorder.ReportBlocked(0)
	assert.NotEmpty(t, heldByExitedOf("graves-survives-gates"),
		"a reachable lock left held is forgotten to make room for garbage gates")
	m.Unlock()
}

// RULES.md R17: a goroutine dump waits until the busy states outnumber
// the goroutines by max(256, NumGoroutine), about twice as many busy
// states as goroutines. With 2000 goroutines parked holding nothing, 3000
// exited holders wait (more than the goroutines, and 256 more), and
// twice the goroutines and 300 more make a trim dump.
func TestKeptStatesWaitForTwiceTheGoroutines(t *testing.T) {
	fresh(t)
	statesFreed(t)
	park := make(chan struct{})
	defer close(park)
	for range 2000 {
		go func() { <-park }()
	}
	dumps := gls.Dumps()
	abandon(3000, nil)
	for range 5 {
		runtime.GC()
		gls.Trim()
	}
	assert.Equal(t, dumps, gls.Dumps(), "3000 exited holders, 2000 goroutines: a dump")
	abandon(2*runtime.NumGoroutine()+300-3000, nil)
	assert.True(t, collectUntil(func() bool { gls.Trim(); return gls.Dumps() > dumps }),
		"twice the goroutines and 300 more exited holders: no dump")
}

// A garbage kept gate whose hold another goroutine released after its
// burial (a hand-off: it showed the lock to gate) and which became garbage
// before any trim saw the release: its grave stops watching it at the
// release, and the exit check leaves its gates alone. The cycle it held
// back stays held back.
func TestAGarbageGateHandedOffAfterBurialStaysAGate(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("graves-handed-a"), lockorder.NewMutex("graves-handed-b")
	var gid int64
	func() {
		g := new(lockorder.Mutex)
		run(func() {
			g.Lock()
			lockAB(a, b)
			lockAB(b, a)
		})
		gid = lockorder.HolderOf(g)
		buryExited(t, func() int64 { return gid })
		run(g.Unlock) // the hand-off, no trim after it
	}()
	for range 3 {
		runtime.GC() // g is collected
	}
	lockorder.ReportBlocked(0)
	assert.Empty(t, only(lockorder.KindCycle), "a gate shown by its hand-off was taken out")
}
