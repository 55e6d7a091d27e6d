//go:build !syncwatch_off

package lockorder_test

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The writers' gate: a read edge X->Y(read) blocks only behind a writer
// of Y. When every write of Y is made holding G, and the cycle's other
// edges are taken holding G, no writer of Y can wait while the cycle
// forms.

// gatedCycle takes, one goroutine after another: Y for writing under G;
// X under Y read-held, under G; Y for reading under X, without G.
func gatedCycle(g *lockorder.Mutex, x *lockorder.Mutex, y *lockorder.RWMutex) {
	gatedCycleIn(run, g, x, y)
}

// gatedCycleIn is gatedCycle with each step run by in.
func gatedCycleIn(in func(func()), g *lockorder.Mutex, x *lockorder.Mutex, y *lockorder.RWMutex) {
	in(func() { g.Lock(); y.Lock(); y.Unlock(); g.Unlock() })
	in(func() {
		g.Lock()
		y.RLock()
		x.Lock()
		x.Unlock()
		y.RUnlock()
		g.Unlock()
	})
	in(func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() })
}

// readOrders takes, one goroutine after another, x under y read-held, and
// y for reading under x: a read cycle, which a writer of y queued between
// the two readers would close.
func readOrders(x *lockorder.Mutex, y *lockorder.RWMutex) { readOrdersIn(run, x, y) }

// readOrdersIn is readOrders with each step run by in.
func readOrdersIn(in func(func()), x *lockorder.Mutex, y *lockorder.RWMutex) {
	in(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() })
	in(func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() })
}

func TestWritersGateHoldsBackReadCycle(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg-G"), lockorder.NewMutex("wg-X"), lockorder.NewRWMutex("wg-Y")
	gatedCycle(g, x, y)
	assert.Empty(t, lockorder.Violations(), "every writer of Y holds G, as does Y->X")

	// Writes of Y under G, and under more, keep the gate.
	h := lockorder.NewMutex("wg-H")
	run(func() {
		g.Lock()
		h.Lock()
		y.Lock()
		y.Unlock()
		h.Unlock()
		g.Unlock()
	})
	assert.Empty(t, lockorder.Violations())

	// A write of Y with nothing held opens the gate: the cycle held back
	// is reported then.
	run(func() { y.Lock(); y.Unlock() })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Contains(t, vs[0].Message, "wg-X -> wg-Y")
}

func TestWritersGateOpenedByAWriteUnderAnotherLock(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg2-G"), lockorder.NewMutex("wg2-X"), lockorder.NewRWMutex("wg2-Y")
	gatedCycle(g, x, y)
	require.Empty(t, lockorder.Violations())
	h := lockorder.NewMutex("wg2-H")
	run(func() { h.Lock(); y.Lock(); y.Unlock(); h.Unlock() }) // a writer of Y without G
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// A write with nothing held of a gated class must not take Mutex.Lock's
// fast path that skips the engine: here a Mutex shares Y's class (one
// name), and its Lock with nothing held opens Y's gate.
func TestWritersGateOpenedByAMutexLockWithNothingHeld(t *testing.T) {
	fresh(t)
	g, x := lockorder.NewMutex("wg3-G"), lockorder.NewMutex("wg3-X")
	y, ym := lockorder.NewRWMutex("wg3-Y"), lockorder.NewMutex("wg3-Y")
	gatedCycle(g, x, y)
	run(func() { g.Lock(); ym.Lock(); ym.Unlock(); g.Unlock() })
	require.Empty(t, lockorder.Violations())
	run(func() { ym.Lock(); ym.Unlock() }) // nothing held
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// The gate covers only the writers: the same cycle, with Y->X taken
// without G, is reported when it closes.
func TestWritersGateNeedsTheOtherEdgesUnderIt(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg4-G"), lockorder.NewMutex("wg4-X"), lockorder.NewRWMutex("wg4-Y")
	run(func() { g.Lock(); y.Lock(); y.Unlock(); g.Unlock() })
	run(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() })
	run(func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// The database pattern: read transactions take the meta lock and then the
// mmap lock for reading; a commit, holding the writer lock, takes the meta
// lock under the mmap read lock and remaps (the mmap lock for writing)
// only with the writer lock held. Nothing can deadlock, nothing is
// reported.
func TestWritersGateDatabasePattern(t *testing.T) {
	fresh(t)
	rw, meta, mmap := lockorder.NewMutex("db-rwlock"), lockorder.NewMutex("db-meta"), lockorder.NewRWMutex("db-mmap")
	for range 3 {
		run(dbBeginTx(meta, mmap))
		run(dbCommit(rw, meta, mmap))
	}
	assert.Empty(t, lockorder.Violations())
}

// dbBeginTx returns the database pattern's read transaction: meta, then
// mmap for reading, nothing else held.
func dbBeginTx(meta *lockorder.Mutex, mmap *lockorder.RWMutex) func() {
	return func() {
		meta.Lock()
		mmap.RLock()
		meta.Unlock()
		mmap.RUnlock()
	}
}

// dbCommit returns its commit with a remap: under rw, mmap for reading,
// then meta; then mmap for writing.
func dbCommit(rw, meta *lockorder.Mutex, mmap *lockorder.RWMutex) func() {
	return func() {
		rw.Lock()
		mmap.RLock()
		meta.Lock()
		meta.Unlock()
		mmap.RUnlock()
		mmap.Lock()
		mmap.Unlock()
		rw.Unlock()
	}
}

// The writers' gate must not count where the cycle leaves Y from a write
// hold of Y: G2 takes G, Y for writing, then X; G1 takes X, then Y for
// reading. G1 waits for G2's write hold, not for a queued writer, and G
// is held by G2 alone: a deadlock.
func TestWritersGateNotPastAWriteHold(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg5-G"), lockorder.NewMutex("wg5-X"), lockorder.NewRWMutex("wg5-Y")
	run(func() {
		g.Lock()
		y.Lock()
		x.Lock()
		x.Unlock()
		y.Unlock()
		g.Unlock()
	})
	run(func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1, "X->Y(read), Y(write)->X deadlocks; G protects nothing")
}

// The same cycle, in the other order of discovery: the edge out of Y's
// write hold closes it.
func TestWritersGateNotPastAWriteHoldClosing(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg6-G"), lockorder.NewMutex("wg6-X"), lockorder.NewRWMutex("wg6-Y")
	run(func() { g.Lock(); y.Lock(); y.Unlock(); g.Unlock() }) // Y gated by G
	run(func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() })
	require.Empty(t, lockorder.Violations(), "Y->X not seen yet")
	run(func() {
		g.Lock()
		y.Lock()
		x.Lock()
		x.Unlock()
		y.Unlock()
		g.Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// The cycle of TestWritersGateNotPastAWriteHold really deadlocks: the
// wait-for monitor sees it. The order checker holds both orders back, each
// until its goroutine's own Unlock (R23), which the deadlock never lets
// come; the monitor's proof of the deadlock proves them, and the cycle is
// reported with it.
func TestWritersGateNotPastAWriteHoldDeadlocks(t *testing.T) {
	reportDeadlocks(t)
	g, x, y := lockorder.NewMutex("wg7-G"), lockorder.NewMutex("wg7-X"), lockorder.NewRWMutex("wg7-Y")
	xHeld, yHeld := make(chan struct{}), make(chan struct{})
	var broken atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		g.Lock()
		y.Lock()
		close(yHeld)
		<-xHeld
		x.Lock()
		x.Unlock()
		if !broken.Load() {
			y.Unlock()
		}
		g.Unlock()
	})
	wg.Go(func() {
		x.Lock()
		close(xHeld)
		<-yHeld
		y.RLock()
		y.RUnlock()
		x.Unlock()
	})
	awaitKind(t, lockorder.KindDeadlock, time.Minute)
	assert.NotEmpty(t, only(lockorder.KindCycle), "the order checker saw both orders and reported nothing")
	broken.Store(true)
	y.Unlock() // break it: sync lets any goroutine unlock
	wg.Wait()
}

// A write of Y by a goroutine whose hold of G was released by another
// goroutine (legal for a Mutex) is a write without G, though the chain
// (G, Y) is cached: it opens the gate.
func TestWritersGateStaleHoldDoesNotCount(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg8-G"), lockorder.NewMutex("wg8-X"), lockorder.NewRWMutex("wg8-Y")
	gatedCycle(g, x, y)
	require.Empty(t, lockorder.Violations())
	run(func() {
		g.Lock()
		run(func() { g.Unlock() }) // handed off and released: G is free
		y.Lock()                   // a write of Y without G
		y.Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 1, "Y was written without G: the gate must open")
}

// After Reset a class's gate is learnt again: the database pattern run
// twice, with a Reset in between as the next test's fresh(t) does.
var (
	wgResetRW, wgResetMeta = lockorder.NewMutex("wg9-rwlock"), lockorder.NewMutex("wg9-meta")
	wgResetMmap            = lockorder.NewRWMutex("wg9-mmap")
)

func wgResetPattern() {
	run(dbBeginTx(wgResetMeta, wgResetMmap))
	run(dbCommit(wgResetRW, wgResetMeta, wgResetMmap))
}

func TestWritersGateLearntAgainAfterReset(t *testing.T) {
	fresh(t)
	wgResetPattern()
	require.Empty(t, lockorder.Violations())
	lockorder.Reset()
	wgResetPattern()
	assert.Empty(t, lockorder.Violations(), "the same program after Reset")
	// And the gate still opens after Reset.
	run(func() { wgResetMmap.Lock(); wgResetMmap.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// Writes made in another mode are not seen: leaving check mode drops the
// writers' gates, and the cycles they held back are reported.
func TestWritersGateDroppedWhenCheckStops(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg10-G"), lockorder.NewMutex("wg10-X"), lockorder.NewRWMutex("wg10-Y")
	gatedCycle(g, x, y)
	require.Empty(t, lockorder.Violations())
	lockorder.Configure(lockorder.WithMode(lockorder.ModeOff))
	run(func() { y.Lock(); y.Unlock() }) // unseen: it breaks the gate
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	assert.Empty(t, only(lockorder.KindCycle), "leaving check mode is no evidence of a broken gate")

	// The gate is learnt afresh from the writes seen from now on.
	run(func() { g.Lock(); y.Lock(); y.Unlock(); g.Unlock() })
	assert.Empty(t, only(lockorder.KindCycle), "a write under G: the gate holds")
	run(func() { y.Lock(); y.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1, "a write without G opens the gate")
}

// A lazily filled cache, as the run shows it: y's first write comes with
// nothing held, and the goroutines that then take y in the two read
// orders all start after that write, or are the writer itself. A writer
// queued between the readers would deadlock them, but no writer of y is
// seen that could queue: the first write is taken for y's initialisation
// (see initwrite_test.go), as bbolt's Open maps its file before the DB is
// shared, and nothing seen shows y shared while it was written. The
// cycle is held back. This is the initialisation rule's limit: a lock
// published before its first write, which is made uncontended, and whose
// readers all start after it, is not predicted to deadlock; a deadlock
// that happens is still reported by the wait-for graph. (Without the
// rule this test asserted the cycle reported.) It is reported as soon as
// a goroutine that was there at the write (it had taken a lockorder lock)
// takes y: the cache was shared when it was written. The tests in
// initwrite_test.go show the other evidence.
func TestFirstWriteBeforeItsReadersHeldBack(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	var x lockorder.Mutex
	var y lockorder.RWMutex
	w := startWorker(t, true)            // there before the write
	run(func() { y.Lock(); y.Unlock() }) // the first acquisition of y
	readOrders(&x, &y)
	require.Empty(t, only(lockorder.KindCycle), "readers started after the write")
	w.run(func() { y.RLock(); y.RUnlock() })
	assert.Len(t, only(lockorder.KindCycle), 1, "a reader there before the write")

	// The same, in one goroutine, the writer: the orders are predicted,
	// not run at once.
	fresh(t)
	var a lockorder.Mutex
	var b lockorder.RWMutex
	b.Lock()
	b.Unlock()
	b.RLock()
	a.Lock()
	a.Unlock()
	b.RUnlock()
	a.Lock()
	b.RLock()
	b.RUnlock()
	a.Unlock()
	assert.Empty(t, only(lockorder.KindCycle), "the writer alone")
}

// The ∃ rule: one edge of the cycle holding a lock of Y's writers' gate
// is enough, in its gate or as the lock it is taken from.

// bboltCycle runs bbolt's locking, each step in a goroutine of its own:
// a commit that remaps (rwlock, then meta, then mmap for writing under
// the remap locks too: every write of mmap holds rwlock); Begin(true)
// under an open read
// transaction (mmap(read) -> rwlock); then the steps more, then beginTx
// (meta, then mmap for reading), whose edge closes the 3-cycle
// mmap(read) -> rwlock -> meta -> mmap(read). The 2-cycle mmap(read) ->
// rwlock -> mmap(write) is a real deadlock (bbolt documents it) and is
// reported when the second step closes it.
func bboltCycle(t *testing.T, rw, meta *lockorder.Mutex, mmap *lockorder.RWMutex, remap []*lockorder.Mutex, more ...func()) {
	t.Helper()
	run(func() {
		rw.Lock()
		meta.Lock()
		meta.Unlock()
		for _, l := range remap {
			l.Lock()
		}
		mmap.Lock()
		mmap.Unlock()
		for _, l := range slices.Backward(remap) {
			l.Unlock()
		}
		rw.Unlock()
	})
	run(func() { mmap.RLock(); rw.Lock(); rw.Unlock(); mmap.RUnlock() })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	require.Contains(t, vs[0].Message, "cycle of 2 locks")
	for _, f := range more {
		run(f)
	}
	run(func() { meta.Lock(); mmap.RLock(); meta.Unlock(); mmap.RUnlock() })
}

// reportedCycle asserts that a cycle report names want.
func reportedCycle(t *testing.T, want string) {
	t.Helper()
	assert.True(t, slices.ContainsFunc(only(lockorder.KindCycle), func(v lockorder.Violation) bool {
		return strings.Contains(v.Message, want)
	}), "no cycle report names %q", want)
}

// No gate is common to the 3-cycle's edges (rw->meta is taken holding
// rwlock as its From, not in its gate), but a reader of mmap waits only
// behind a queued writer, which holds rwlock; rwlock's holder is the
// goroutine of rw->meta, waiting for meta, not queued on mmap. Not
// reported, until a write of mmap without rwlock: one with nothing held,
// or, where every remap also holds k (the gate {rwlock, k}), one under k
// alone (which also makes k->mmap(write) an edge without rwlock, closing
// k -> mmap -> rwlock -> k: reported too).
func TestWritersGateHeldByOneEdgeOfTheCycle(t *testing.T) {
	for _, withK := range []bool{false, true} {
		fresh(t)
		rw, meta, mmap := lockorder.NewMutex("wg11-rwlock"), lockorder.NewMutex("wg11-meta"), lockorder.NewRWMutex("wg11-mmap")
		k := lockorder.NewMutex("wg11-k")
		var remap []*lockorder.Mutex
		if withK {
			remap = append(remap, k)
		}
		bboltCycle(t, rw, meta, mmap, remap)
		assert.Len(t, only(lockorder.KindCycle), 1, "the 3-cycle is held back")

		run(func() { // a write of mmap without rwlock
			for _, l := range remap {
				l.Lock()
			}
			mmap.Lock()
			mmap.Unlock()
			for _, l := range remap {
				l.Unlock()
			}
		})
		reportedCycle(t, "cycle of 3 locks: wg11-meta -> wg11-mmap -> wg11-rwlock")
	}
}

// The shortest cycle the closing edge makes is held back, a longer one
// through other locks is not: the longer one is reported.
func TestWritersGateHeldBackShortestOnly(t *testing.T) {
	fresh(t)
	rw, meta, mmap := lockorder.NewMutex("wg13-rwlock"), lockorder.NewMutex("wg13-meta"), lockorder.NewRWMutex("wg13-mmap")
	a, b := lockorder.NewMutex("wg13-a"), lockorder.NewMutex("wg13-b")
	bboltCycle(t, rw, meta, mmap, nil,
		func() { mmap.RLock(); a.Lock(); a.Unlock(); mmap.RUnlock() },
		func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() },
		func() { b.Lock(); meta.Lock(); meta.Unlock(); b.Unlock() },
	)
	assert.Len(t, only(lockorder.KindCycle), 2)
	reportedCycle(t, "cycle of 4 locks: wg13-meta -> wg13-mmap -> wg13-a -> wg13-b")
}

// The lock of Y's writers' gate held by the reader of Y alone: every
// writer of Y must hold G to queue, so none can while the reader waits,
// and its read acquisition does not block. Not reported; taking
// X->Y(read) once without G reports it.
func TestWritersGateHeldByTheReaderAlone(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg14-G"), lockorder.NewMutex("wg14-X"), lockorder.NewRWMutex("wg14-Y")
	run(func() { g.Lock(); y.Lock(); y.Unlock(); g.Unlock() })
	run(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() })
	run(func() {
		g.Lock()
		x.Lock()
		y.RLock()
		y.RUnlock()
		x.Unlock()
		g.Unlock()
	})
	assert.Empty(t, lockorder.Violations())
	run(func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() })
	assert.Len(t, only(lockorder.KindCycle), 1)
}

// bboltClose runs bbolt's locking around Close, each step in a goroutine
// of its own, in the order given: 0, beginTx (meta, then mmap for
// reading, nothing else held); 1, a commit under rwlock that takes mmap
// for reading, then meta, and remaps (mmap for writing) under rwlock;
// 2, Close (meta, then mmap for writing), under rwlock if underRW. The
// pair meta -> mmap is seen for reading without a gate and for writing
// under rwlock: each sighting is its own edge, and no cycle with
// mmap(read) -> meta, under rwlock, can deadlock through either (for
// writing, rwlock is common; for reading, mmap's writers all hold
// rwlock, and so does the edge out of mmap's read hold). Close without
// rwlock is a real deadlock with the commit's mmap(read) -> meta.
func bboltClose(rw, meta *lockorder.Mutex, mmap *lockorder.RWMutex, underRW bool, order []int) {
	steps := []func(){
		dbBeginTx(meta, mmap),
		dbCommit(rw, meta, mmap),
		func() { // Close
			if underRW {
				rw.Lock()
			}
			meta.Lock()
			mmap.Lock()
			mmap.Unlock()
			meta.Unlock()
			if underRW {
				rw.Unlock()
			}
		},
	}
	for _, i := range order {
		run(steps[i])
	}
}

func TestReadAndWriteSightingsKeptApart(t *testing.T) {
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, o := range orders {
		fresh(t)
		rw, meta, mmap := lockorder.NewMutex("wg15-rwlock"), lockorder.NewMutex("wg15-meta"), lockorder.NewRWMutex("wg15-mmap")
		bboltClose(rw, meta, mmap, true, o)
		bboltClose(rw, meta, mmap, true, o)
		assert.Empty(t, lockorder.Violations(), "order %v: meta -> mmap(read) has no gate, meta -> mmap(write) is under rwlock", o)

		// Close without rwlock: meta -> mmap(write) and mmap(read) ->
		// meta deadlock.
		fresh(t)
		rw, meta, mmap = lockorder.NewMutex("wg16-rwlock"), lockorder.NewMutex("wg16-meta"), lockorder.NewRWMutex("wg16-mmap")
		bboltClose(rw, meta, mmap, false, o)
		// The cycle is reported once, when first found. Close's write of
		// mmap narrows mmap's writers' gate at once, which lets the cycle
		// through beginTx's meta -> mmap(read) be found then; Close's own
		// meta -> mmap(write) waits for Close's Unlock of meta (R23), and
		// is one more sighting of the same finding.
		vs := only(lockorder.KindCycle)
		require.Len(t, vs, 1, "order %v", o)
		assert.Contains(t, vs[0].Message, "cycle of 2 locks")
		assert.True(t, slices.ContainsFunc(vs[0].Cycle, func(e lockorder.Edge) bool {
			return e.From == "wg16-meta" && e.To == "wg16-mmap" && !e.FromRead
		}), "order %v: lock(meta) then mmap: %v", o, vs[0].Cycle)
		assert.True(t, slices.ContainsFunc(vs[0].Cycle, func(e lockorder.Edge) bool {
			return e.From == "wg16-mmap" && e.To == "wg16-meta" && e.FromRead
		}), "order %v: rlock(mmap) then lock(meta): %v", o, vs[0].Cycle)
	}
}

// A write-read inversion is reported though the pair was also seen for
// reading under a common gate: the write sighting has none.
func TestWriteSightingWithoutGateReported(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("wg17-G"), lockorder.NewMutex("wg17-X"), lockorder.NewRWMutex("wg17-Y")
	underG := func(f func()) func() { return func() { g.Lock(); f(); g.Unlock() } }
	run(underG(func() { x.Lock(); y.RLock(); y.RUnlock(); x.Unlock() }))
	run(underG(func() { y.RLock(); x.Lock(); x.Unlock(); y.RUnlock() }))
	require.Empty(t, lockorder.Violations(), "under G, and y never written")
	run(func() { x.Lock(); y.Lock(); y.Unlock(); x.Unlock() })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Contains(t, vs[0].Message, "wg17-X -> wg17-Y")
	assert.True(t, slices.ContainsFunc(vs[0].Cycle, func(e lockorder.Edge) bool {
		return e.From == "wg17-X" && e.To == "wg17-Y" && !e.ToRead
	}), "the write sighting: %v", vs[0].Cycle)
}

// Two edges of a cycle holding one lock cannot both be waiting in it
// (the pair rule). bbolt's Close takes rwlock, metalock, then mmaplock
// for writing; a write transaction begun with a read transaction open
// takes rwlock under mmaplock(read), then metalock under rwlock. The
// cycle metalock -> mmap -> rwlock -> metalock needs Close and the write
// transaction to hold rwlock at once: not reported. The inversion
// rwlock -> mmap (Close) against mmap(read) -> rwlock is real (a Close
// while a goroutine with a read transaction begins a write one) and is.
func TestTwoEdgesHoldingOneLockCannotBothWait(t *testing.T) {
	fresh(t)
	rw, meta, mmap := lockorder.NewMutex("pair-rw"), lockorder.NewMutex("pair-meta"), lockorder.NewRWMutex("pair-mmap")
	closeDB := func() {
		rw.Lock()
		meta.Lock()
		mmap.Lock()
		mmap.Unlock()
		meta.Unlock()
		rw.Unlock()
	}
	run(func() {
		mmap.RLock() // a read transaction
		rw.Lock()    // a write transaction begins
		meta.Lock()
		meta.Unlock()
		rw.Unlock()
		mmap.RUnlock()
	})
	run(closeDB)
	cycles := only(lockorder.KindCycle)
	require.Len(t, cycles, 1, "only the rwlock/mmap inversion")
	assert.Len(t, cycles[0].Cycle, 2)

	// Without rwlock around Close's metalock and mmaplock, Close and the
	// write transaction deadlock on metalock and mmaplock.
	fresh(t)
	rw, meta, mmap = lockorder.NewMutex("pair2-rw"), lockorder.NewMutex("pair2-meta"), lockorder.NewRWMutex("pair2-mmap")
	run(func() {
		mmap.RLock()
		rw.Lock()
		meta.Lock()
		meta.Unlock()
		rw.Unlock()
		mmap.RUnlock()
	})
	run(func() { meta.Lock(); mmap.Lock(); mmap.Unlock(); meta.Unlock() })
	cycles = only(lockorder.KindCycle)
	assert.Len(t, cycles, 1)
}

// A report shows, for each edge, a sighting that can take part in the
// deadlock: X -> Y first seen under G, then without it, is shown as seen
// without it (the sighting under G could not deadlock with the other
// order taken under G too).
func TestReportShowsTheSightingThatMadeTheCycle(t *testing.T) {
	fresh(t)
	g, x, y := lockorder.NewMutex("shown-G"), lockorder.NewMutex("shown-X"), lockorder.NewMutex("shown-Y")
	run(func() { takeXYUnderG(g, x, y) })
	run(func() { takeXY(x, y) })
	run(func() { y.Lock(); x.Lock(); x.Unlock(); y.Unlock() })
	cycles := only(lockorder.KindCycle)
	require.Len(t, cycles, 1)
	var shown string
	for _, e := range cycles[0].Cycle {
		if e.From == "shown-X" {
			shown = e.Stack.String()
		}
	}
	assert.Contains(t, shown, "takeXY")
	assert.NotContains(t, shown, "takeXYUnderG")
}

//go:noinline
func takeXYUnderG(g, x, y *lockorder.Mutex) {
	g.Lock()
	takeXY(x, y)
	g.Unlock()
}

//go:noinline
func takeXY(x, y *lockorder.Mutex) {
	x.Lock()
	y.Lock()
	y.Unlock()
	x.Unlock()
}
