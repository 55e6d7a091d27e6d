//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Order edges from read holds: a goroutine that takes Y while it seems to
// read-hold X may have handed X's hold to another goroutine to RUnlock.
// The edge X(read)->Y counts once the goroutine releases X itself; a
// cycle through it is reported then, or when its other edges come later.

//go:noinline
func lockUnderRead(y *lockorder.Mutex) { y.Lock(); y.Unlock() }

// handOffThenLock: G read-locks x, hands the hold to H, takes y while the
// hold is outstanding, and H then releases it.
func handOffThenLock(x *lockorder.RWMutex, y *lockorder.Mutex) {
	handed, taken, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { // H: ends the read transaction G began
		defer close(done)
		<-handed
		<-taken
		x.RUnlock()
	}()
	run(func() { // G
		x.RLock()
		close(handed)
		lockUnderRead(y)
		close(taken)
	})
	<-done
}

// TestReadEdgeOfHandedOffHoldIsNotACycle: G's x(read)->y rests on a hold H
// released: with y->x taken elsewhere, before or after, nothing is
// reported.
func TestReadEdgeOfHandedOffHoldIsNotACycle(t *testing.T) {
	for _, otherFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("otherFirst=", otherFirst), func(t *testing.T) {
			fresh(t)
			x, y := lockorder.NewRWMutex("hre-X"), lockorder.NewMutex("hre-Y")
			other := func() { run(func() { y.Lock(); x.Lock(); x.Unlock(); y.Unlock() }) }
			if otherFirst {
				other()
			}
			handOffThenLock(x, y)
			if !otherFirst {
				other()
			}
			assert.Empty(t, lockorder.Violations())
			// The pattern again, now that everything is known: still nothing.
			handOffThenLock(x, y)
			other()
			assert.Empty(t, lockorder.Violations())
		})
	}
}

// TestReadEdgeOfOwnHoldIsReportedAtTheRUnlock: G takes y under its own read
// hold of x; y->x was taken before. The cycle is reported at G's RUnlock,
// not at its Lock of y, with the stack of that Lock.
func TestReadEdgeOfOwnHoldIsReportedAtTheRUnlock(t *testing.T) {
	fresh(t)
	x, y := lockorder.NewRWMutex("ore-X"), lockorder.NewMutex("ore-Y")
	run(func() { y.Lock(); x.Lock(); x.Unlock(); y.Unlock() })
	run(func() {
		x.RLock()
		lockUnderRead(y)
		assert.Empty(t, lockorder.Violations(), "the hold is not proved G's own yet")
		assert.Equal(t, 1, lockorder.WaitingReadEdges())
		x.RUnlock()
		assert.Zero(t, lockorder.WaitingReadEdges())
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Contains(t, vs[0].Message, "ore-X")
	assert.Contains(t, vs[0].Message, "ore-Y")
	require.NotEmpty(t, vs[0].Stack)
	assert.Contains(t, vs[0].Stack[0].Function, "lockUnderRead", "the stack is the acquisition's")
}

// TestReadEdgeOfOwnHoldClosesALaterCycle: the proved edge is in the graph:
// y->x taken afterwards closes the cycle once y's hold is proved its
// taker's own, at y's Unlock (R23).
func TestReadEdgeOfOwnHoldClosesALaterCycle(t *testing.T) {
	fresh(t)
	x, y := lockorder.NewRWMutex("ore2-X"), lockorder.NewMutex("ore2-Y")
	run(func() { x.RLock(); lockUnderRead(y); x.RUnlock() })
	require.Empty(t, lockorder.Violations())
	run(func() {
		y.Lock()
		x.Lock()
		x.Unlock()
		assert.Empty(t, only(lockorder.KindCycle), "y->x waits for y's Unlock")
		y.Unlock()
		assert.Len(t, only(lockorder.KindCycle), 1, "reported at y's Unlock")
	})
}

// TestReadEdgeWithWriteEdgeInOneChain: under w (write) and x (read), y is
// taken. w->y counts once w's Unlock proves the hold G's own (R23);
// x(read)->y once x's RUnlock does (R12); the chain is cached only when
// both are in, so a handed-off x or w never leaves it cached unproved.
func TestReadEdgeWithWriteEdgeInOneChain(t *testing.T) {
	fresh(t)
	w, x, y := lockorder.NewMutex("mix-W"), lockorder.NewRWMutex("mix-X"), lockorder.NewMutex("mix-Y")
	run(func() { y.Lock(); w.Lock(); w.Unlock(); y.Unlock() }) // y->w
	run(func() { y.Lock(); x.Lock(); x.Unlock(); y.Unlock() }) // y->x
	var chains int
	run(func() {
		w.Lock()
		x.RLock()
		chains = lockorder.Chains()
		lockUnderRead(y)
		assert.Empty(t, only(lockorder.KindCycle), "both edges wait")
		x.RUnlock()
		assert.Len(t, only(lockorder.KindCycle), 1, "x(read)->y closes its cycle at the RUnlock")
		assert.Equal(t, chains, lockorder.Chains(), "the chain waits for w->y")
		w.Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 2, "w->y closes its cycle at w's Unlock")
	assert.Greater(t, lockorder.Chains(), chains, "every edge of the chain is in: it is cached")
}

// TestLoopUnderReadHoldWaitsOnce: a loop taking one lock under a read hold
// records its edge once (no allocation per iteration: the slow path is not
// taken again), and what waits stays bounded however many locks are taken.
func TestLoopUnderReadHoldWaitsOnce(t *testing.T) {
	fresh(t)
	x, y := lockorder.NewRWMutex("loop-X"), lockorder.NewMutex("loop-Y")
	run(func() {
		x.RLock()
		y.Lock()
		y.Unlock()
		assert.Equal(t, 1, lockorder.WaitingReadEdges())
		allocs := testing.AllocsPerRun(1000, func() { y.Lock(); y.Unlock() })
		assert.Zero(t, allocs, "a chain that waits is not recorded again")
		assert.Equal(t, 1, lockorder.WaitingReadEdges())

		ys := make([]*lockorder.Mutex, 3*lockorder.MaxWaitingReadEdges)
		for i := range ys {
			ys[i] = lockorder.NewMutex("loop-Ys")
			ys[i].Lock()
			ys[i].Unlock()
			assert.LessOrEqual(t, lockorder.WaitingReadEdges(), lockorder.MaxWaitingReadEdges)
		}
		x.RUnlock()
		assert.Zero(t, lockorder.WaitingReadEdges())
	})
	_, edges := lockorder.GraphSize()
	assert.Equal(t, 2, edges, "loop-X->loop-Y and loop-X->loop-Ys, each once")
	assert.Empty(t, lockorder.Violations())
}

// TestReadEdgesForgottenByReset: what waits across a Reset is forgotten
// with the graph.
func TestReadEdgesForgottenByReset(t *testing.T) {
	fresh(t)
	x, y := lockorder.NewRWMutex("rst-X"), lockorder.NewMutex("rst-Y")
	run(func() {
		x.RLock()
		lockUnderRead(y)
		lockorder.Reset()
		x.RUnlock()
	})
	_, edges := lockorder.GraphSize()
	assert.Zero(t, edges)
}

// TestReadEdgesForgottenByModeChange: a mode change drops what waits, with
// the held locks it was recorded under.
func TestReadEdgesForgottenByModeChange(t *testing.T) {
	fresh(t)
	x, y := lockorder.NewRWMutex("mode-X"), lockorder.NewMutex("mode-Y")
	run(func() {
		x.RLock()
		lockUnderRead(y)
		require.Equal(t, 1, lockorder.WaitingReadEdges())
		lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
		lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
		lockUnderRead(y) // the goroutine's first lock under the new mode
		assert.Zero(t, lockorder.WaitingReadEdges())
		x.RUnlock()
	})
	_, edges := lockorder.GraphSize()
	assert.Zero(t, edges)
}

// TestReadHoldCycleThatHangsIsADeadlock: G takes y under its read hold of
// x and blocks, K holding y waits to write-lock x: the order cycle is not
// reported (the hold has not proved G's own), the deadlock is, by the
// wait-for graph after its grace period.
func TestReadHoldCycleThatHangsIsADeadlock(t *testing.T) {
	reportDeadlocks(t)
	x, y := lockorder.NewRWMutex("hang-X"), lockorder.NewMutex("hang-Y")
	xHeld, yHeld, done := make(chan struct{}), make(chan struct{}), make(chan struct{}, 2)
	go func() { // G
		x.RLock()
		close(xHeld)
		<-yHeld
		y.Lock() // K holds y
		y.Unlock()
		done <- struct{}{}
	}()
	go func() { // K
		<-xHeld
		y.Lock()
		close(yHeld)
		x.Lock() // G read-holds x
		x.Unlock()
		y.Unlock()
		done <- struct{}{}
	}()
	v := awaitKind(t, lockorder.KindDeadlock, time.Minute)
	assert.Contains(t, v.Message, "cycle of 2 goroutines")
	assert.Empty(t, only(lockorder.KindCycle))
	x.RUnlock() // G's hold, released on its behalf: the cycle breaks
	<-done
	<-done
	assert.Empty(t, only(lockorder.KindCycle), "G never proved the hold its own")
}

// TestReadTransactionsHandedToGoroutines is bbolt's
// TestDB_Concurrent_WriteTo_and_ConsistentRead: one goroutine begins read
// transactions (the meta lock, then the mmap lock for reading) and hands
// each to a goroutine that rolls it back, and meanwhile begins write
// transactions (the writer lock, then the meta lock); a commit remaps (the
// mmap lock for writing) under the writer lock. The mmap read holds are
// never the first goroutine's own when it takes the writer lock: nothing
// is reported.
func TestReadTransactionsHandedToGoroutines(t *testing.T) {
	fresh(t)
	rw, meta, mmap := lockorder.NewMutex("bolt-rwlock"), lockorder.NewMutex("bolt-metalock"), lockorder.NewRWMutex("bolt-mmaplock")
	begin := func() {
		meta.Lock()
		mmap.RLock()
		meta.Unlock()
	}
	run(func() {
		for range 5 {
			var rollbacks []chan struct{}
			for range 3 {
				begin()
				rollback := make(chan struct{})
				rollbacks = append(rollbacks, rollback)
				go func() { <-rollback; mmap.RUnlock() }() // f(i, rtx)
			}
			rw.Lock() // a write transaction while the reads are out
			meta.Lock()
			meta.Unlock()
			for _, r := range rollbacks {
				close(r)
			}
			mmap.Lock() // the commit remaps once the readers are gone
			mmap.Unlock()
			rw.Unlock()
		}
	})
	assert.Empty(t, lockorder.Violations())
}

// TestManyReadTransactionsHandedToGoroutines is bbolt's
// TestDB_Concurrent_WriteTo_and_ConsistentRead as it ran: the read
// transactions handed out are rolled back only after many more were
// begun, so that far more edges from the handed-off holds of the mmap
// lock wait on the first goroutine than it keeps (each under a new chain:
// the holds pile up). None may be recorded: the commit's remap (the mmap
// lock for writing under the writer lock) closes no cycle.
func TestManyReadTransactionsHandedToGoroutines(t *testing.T) {
	fresh(t)
	rw, meta, mmap := lockorder.NewMutex("boltn-rwlock"), lockorder.NewMutex("boltn-metalock"), lockorder.NewRWMutex("boltn-mmaplock")
	begin := func() {
		meta.Lock()
		mmap.RLock()
		meta.Unlock()
	}
	rollback := make(chan struct{})
	var done []chan struct{}
	run(func() {
		for range 2 * lockorder.MaxWaitingReadEdges / 5 {
			rw.Lock() // db.Begin(true) while the earlier reads are out
			meta.Lock()
			meta.Unlock()
			for range 5 {
				begin() // db.Begin(false), then go f(i, rtx)
				d := make(chan struct{})
				done = append(done, d)
				go func() { defer close(d); <-rollback; mmap.RUnlock() }()
			}
			rw.Unlock() // tx.Commit(), with no remap
		}
		assert.LessOrEqual(t, lockorder.WaitingReadEdges(), lockorder.MaxWaitingReadEdges)
	})
	close(rollback)
	for _, d := range done {
		<-d
	}
	run(func() { // a later commit remaps
		rw.Lock()
		mmap.Lock()
		mmap.Unlock()
		rw.Unlock()
	})
	assert.Empty(t, lockorder.Violations())
}

// TestManyChainsUnderOwnReadHoldWait: under its own read hold of x, G
// takes y in many chains (under a different lock of class A each time),
// more than a goroutine keeps edges waiting. The edges x(read)->A and
// x(read)->y wait once each, whatever the chain: nothing is recorded
// before the hold proves G's own, and the cycles with y->x are reported
// at G's RUnlock.
func TestManyChainsUnderOwnReadHoldWait(t *testing.T) {
	fresh(t)
	x, y := lockorder.NewRWMutex("mch-X"), lockorder.NewMutex("mch-Y")
	run(func() { y.Lock(); x.Lock(); x.Unlock(); y.Unlock() })
	run(func() {
		x.RLock()
		for range 2 * lockorder.MaxWaitingReadEdges {
			a := lockorder.NewMutex("mch-A")
			a.Lock()
			lockUnderRead(y)
			a.Unlock()
		}
		assert.Empty(t, lockorder.Violations(), "the hold is not proved G's own yet")
		assert.Equal(t, 2, lockorder.WaitingReadEdges(), "x->A and x->y, once each")
		x.RUnlock()
		assert.Zero(t, lockorder.WaitingReadEdges())
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 2, "x(read)->y->x, and x(read)->A->y->x")
	msgs := vs[0].Message + vs[1].Message
	assert.Contains(t, msgs, "mch-X -> mch-Y -> mch-X")
	assert.Contains(t, msgs, "mch-X -> mch-A -> mch-Y -> mch-X")
}
