//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Rule R23: an edge from a Mutex's write hold waits until the goroutine
// that took the hold unlocks it itself. A hold handed to another goroutine
// to unlock, or never released, proves nothing.

// summary is the shape of a metrics summary that flushes in the
// background: Observe takes buf, then mu, and hands mu to a goroutine
// that flushes and unlocks it; Write takes buf, then mu. The only order is
// buf, then mu; the next Observe takes buf while mu is still locked on
// the flusher's behalf, which is no order of the code.
type summary struct {
	buf, mu *lockorder.Mutex
	flushed chan struct{}
}

func (s *summary) observe(release <-chan struct{}) {
	s.buf.Lock()
	defer s.buf.Unlock()
	s.mu.Lock()
	go func() {
		<-release // flushing
		s.mu.Unlock()
		s.flushed <- struct{}{}
	}()
}

func (s *summary) write() {
	s.buf.Lock()
	s.mu.Lock()
	s.buf.Unlock()
	s.mu.Unlock()
}

func TestWriteEdgeOfAHandedOffHoldIsNoOrder(t *testing.T) {
	fresh(t)
	s := &summary{buf: lockorder.NewMutex("sum-buf"), mu: lockorder.NewMutex("sum-mu"), flushed: make(chan struct{})}
	run(func() {
		release := make(chan struct{})
		s.observe(release)
		// mu is still locked, for the flusher: this goroutine takes buf
		// "under" it.
		s.buf.Lock()
		s.buf.Unlock()
		close(release)
		<-s.flushed
		s.write()
	})
	run(s.write)
	assert.Empty(t, lockorder.Violations(), "buf -> mu is the only order: mu -> buf was seen under a hold another goroutine released")
}

// A lock locked for good (a file locked on close, by design) proves
// nothing either: what its goroutine takes later is no order under it.
func TestWriteEdgeOfAHoldNeverReleasedIsNoOrder(t *testing.T) {
	fresh(t)
	files := lockorder.NewRWMutex("wp-files")
	closed := lockorder.NewRWMutex("wp-file")
	open := lockorder.NewRWMutex("wp-file")
	run(func() {
		closed.Lock() // kept locked: the file is closed
		files.Lock()  // the next database opens: "file, then files"
		files.Unlock()
	})
	run(func() { // a reader: files, then a file, for reading
		files.RLock()
		open.RLock()
		open.RUnlock()
		files.RUnlock()
	})
	assert.Empty(t, lockorder.Violations(), "file -> files was seen only under a hold never released")
}

// The order is recorded at the Unlock that proves it: a real inversion is
// reported then, with the stack of the acquisition.
func TestWriteEdgeIsProvedAtItsOwnUnlock(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("wp-A"), lockorder.NewMutex("wp-B")
	run(func() { lockAB(a, b) })
	chains := lockorder.Chains()
	run(func() {
		b.Lock()
		a.Lock()
		a.Unlock()
		assert.Empty(t, lockorder.Violations(), "b -> a waits for b's Unlock")
		assert.Equal(t, chains, lockorder.Chains(), "its chain is not cached yet")
		b.Unlock()
		vs := only(lockorder.KindCycle)
		require.Len(t, vs, 1, "reported at b's Unlock")
		require.NotEmpty(t, vs[0].Stack)
		assert.Contains(t, vs[0].Stack[0].Function, "TestWriteEdgeIsProvedAtItsOwnUnlock", "the stack is the acquisition's")
	})
	assert.Greater(t, lockorder.Chains(), chains, "the chain is cached once proved")
}

// A goroutine that handed one hold off and later holds the lock itself
// proves the edges of its own hold, not those of the one handed off.
func TestWriteEdgeOfAHoldHandedOffThenTakenAgain(t *testing.T) {
	fresh(t)
	m, n, x := lockorder.NewMutex("wp2-M"), lockorder.NewMutex("wp2-N"), lockorder.NewMutex("wp2-X")
	run(func() { lockAB(n, m) }) // n -> m
	run(func() {
		m.Lock()
		n.Lock() // m -> n, under a hold handed off below
		n.Unlock()
		run(m.Unlock) // another goroutine unlocks m
		m.Lock()      // a hold of its own, under which n is not taken
		m.Unlock()
	})
	assert.Empty(t, lockorder.Violations(), "m -> n was seen only under the hold handed off")
	run(func() { lockAB(m, x) })
	run(func() {
		m.Lock()
		n.Lock() // now under a hold of its own
		n.Unlock()
		m.Unlock()
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "m -> n proved by the goroutine's own Unlock closes n -> m")
	assert.Contains(t, vs[0].Message, "wp2-M")
	assert.Contains(t, vs[0].Message, "wp2-N")
}

// Edges from several holds wait on each: the one released first proves
// its own, and the chain is cached when the last is proved.
func TestWriteEdgesOfTwoHoldsAreProvedOneByOne(t *testing.T) {
	fresh(t)
	a, b, c := lockorder.NewMutex("wp3-A"), lockorder.NewMutex("wp3-B"), lockorder.NewMutex("wp3-C")
	run(func() { lockAB(c, a) }) // c -> a
	run(func() {
		a.Lock()
		b.Lock()
		c.Lock() // a -> c, b -> c
		c.Unlock()
		assert.Equal(t, 3, lockorder.ProvingEdges(), "a -> b, a -> c, b -> c")
		a.Unlock() // proves a -> b and a -> c: the cycle a, c
		require.Len(t, only(lockorder.KindCycle), 1)
		assert.Equal(t, 1, lockorder.ProvingEdges(), "b -> c still waits")
		chains := lockorder.Chains()
		b.Unlock()
		assert.Zero(t, lockorder.ProvingEdges())
		assert.Equal(t, chains+1, lockorder.Chains(), "the chain a, b, c is cached once b -> c is proved")
	})
}

// A handed-off hold's edges never wait long: the lock's next holder
// changes its count of holders, and they are dropped; a goroutine that
// keeps locks for good keeps only a bounded number waiting.
func TestWriteEdgesWaitingAreBounded(t *testing.T) {
	fresh(t)
	keep := lockorder.NewMutex("wp4-keep")
	run(func() {
		keep.Lock() // never released
		for range 2*lockorder.MaxProvingEdges + 10 {
			var m lockorder.Mutex
			m.Lock()
			m.Unlock()
		}
		assert.LessOrEqual(t, lockorder.ProvingEdges(), lockorder.MaxProvingEdges)
	})
}

// A run that deadlocks on its first try never unlocks: the monitor's
// proof of the deadlock proves the orders the goroutines held back, and
// the cycle is reported before the deadlock, with both acquisitions'
// stacks.
func TestWriteEdgesOfADeadlockAreProvedByIt(t *testing.T) {
	reportDeadlocks(t)
	a, b := lockorder.NewMutex("wp5-A"), lockorder.NewMutex("wp5-B")
	var rescued atomic.Bool
	held := make(chan struct{}, 2)
	var wg sync.WaitGroup
	order := func(x, y *lockorder.Mutex) {
		x.Lock()
		held <- struct{}{}
		for len(held) < 2 {
			runtime.Gosched()
		}
		y.Lock()
		y.Unlock()
		if x != a || !rescued.Load() { // a is unlocked for it below
			x.Unlock()
		}
	}
	wg.Go(func() { order(a, b) })
	wg.Go(func() { order(b, a) })
	d := awaitKind(t, lockorder.KindDeadlock, time.Minute)
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "proved by the deadlock")
	assert.Less(t, vs[0].ID, d.ID, "reported before the deadlock")
	for _, e := range vs[0].Cycle {
		require.NotEmpty(t, e.Stack)
		assert.Contains(t, e.Stack[0].Function, "TestWriteEdgesOfADeadlockAreProvedByIt")
	}
	rescued.Store(true)
	a.Unlock() // break it: sync lets any goroutine unlock
	wg.Wait()
}
