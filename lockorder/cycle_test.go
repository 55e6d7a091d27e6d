//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

//go:noinline
func lockAB(a, b sync.Locker) {
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
}

func TestABBAReportedWithoutDeadlock(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("A"), lockorder.NewMutex("B")
	run(func() { lockAB(a, b) })
	require.Empty(t, lockorder.Violations(), "one order alone is fine")
	run(func() { lockAB(b, a) })

	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	v := vs[0]
	assert.Equal(t, "lockorder", v.Source)
	require.Len(t, v.Cycle, 2)
	// The closing edge comes first: B held, A acquired.
	assert.Equal(t, "B", v.Cycle[0].From)
	assert.Equal(t, "A", v.Cycle[0].To)
	assert.Equal(t, "A", v.Cycle[1].From)
	assert.Equal(t, "B", v.Cycle[1].To)
	assert.NotEqual(t, v.Cycle[0].Goroutine, v.Cycle[1].Goroutine, "the two orders ran in different goroutines")
	for _, e := range v.Cycle {
		require.NotEmpty(t, e.Stack, "edge %s->%s has no stack", e.From, e.To)
		assert.True(t, strings.HasSuffix(e.Stack[0].Function, "lockorder_test.lockAB"), "edge stack starts at %s", e.Stack[0].Function)
		assert.NotZero(t, e.Stack[0].Line)
		for _, f := range e.Stack {
			assert.False(t, strings.HasPrefix(f.Function, "github.com/syncwatch/syncwatch/lockorder."), "lockorder frame in stack: %s", f.Function)
		}
	}
	names := []string{v.Locks[0].Name, v.Locks[1].Name}
	assert.ElementsMatch(t, []string{"A", "B"}, names)

	s := v.String()
	for _, want := range []string{"lock-order-cycle", "Possible deadlock scenario", "lock(A)", "lock(B)  <- blocks", "*** DEADLOCK ***", "lockAB"} {
		assert.Contains(t, s, want)
	}
}

func TestCycleOfThreeReportedWithWholeChain(t *testing.T) {
	fresh(t)
	a, b, c := lockorder.NewMutex("A3"), lockorder.NewMutex("B3"), lockorder.NewMutex("C3")
	run(func() { lockAB(a, b) })
	run(func() { lockAB(b, c) })
	require.Empty(t, lockorder.Violations())
	run(func() { lockAB(c, a) })

	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	var edges []string
	for _, e := range vs[0].Cycle {
		edges = append(edges, e.From+"->"+e.To)
	}
	assert.Equal(t, []string{"C3->A3", "A3->B3", "B3->C3"}, edges)
	assert.Contains(t, vs[0].Message, "cycle of 3 locks: C3 -> A3 -> B3 -> C3")
}

func TestLongCycle(t *testing.T) {
	fresh(t)
	const n = 12
	ms := make([]*lockorder.Mutex, n)
	for i := range ms {
		ms[i] = lockorder.NewMutex(fmt.Sprintf("ring%d", i))
	}
	for i := 0; i+1 < n; i++ {
		run(func() { lockAB(ms[i], ms[i+1]) })
	}
	require.Empty(t, lockorder.Violations())
	run(func() { lockAB(ms[n-1], ms[0]) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Len(t, vs[0].Cycle, n)
}

// Two objects, each locked one way, predict the inversion (R2): no lock
// meets both orders, so nothing shows them bound to different objects
// (R26).
func TestClassLevelCycleAcrossInstances(t *testing.T) {
	fresh(t)
	store1, replica1 := lockorder.NewMutex("store"), lockorder.NewMutex("replica")
	store2, replica2 := lockorder.NewMutex("store"), lockorder.NewMutex("replica")
	run(func() { lockAB(store1, replica1) })
	run(func() { lockAB(replica2, store2) })

	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "instances differ, classes invert")
	assert.Equal(t, "replica", vs[0].Cycle[0].From)
	assert.Equal(t, "store", vs[0].Cycle[0].To)
}

func TestZeroValueMutexesAreTheirOwnClass(t *testing.T) {
	fresh(t)
	var a1, b1, a2, b2 lockorder.Mutex
	run(func() { lockAB(&a1, &b1) })
	run(func() { lockAB(&b2, &a2) })
	assert.Empty(t, only(lockorder.KindCycle), "different zero-value instances share no class")

	run(func() { lockAB(&b1, &a1) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	// Named after the code that first locked them, with instance numbers.
	assert.Regexp(t, `^lockorder_test\.lockAB \(cycle_test\.go:\d+\)#\d+$`, vs[0].Cycle[0].From)
}

func TestSameClassInstancesOrderedByInstance(t *testing.T) {
	fresh(t)
	shards := make([]*lockorder.Mutex, 8)
	for i := range shards {
		shards[i] = lockorder.NewMutex("shard")
	}
	// A canonical order over instances of one class is fine, however often.
	for range 3 {
		run(func() {
			for _, s := range shards {
				s.Lock()
			}
			for i := len(shards) - 1; i >= 0; i-- {
				shards[i].Unlock()
			}
		})
	}
	require.Empty(t, lockorder.Violations())
	// Two instances taken in both orders is a cycle.
	run(func() { lockAB(shards[5], shards[2]) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Equal(t, "shard#"+suffix(vs[0].Cycle[0].From), vs[0].Cycle[0].From)
}

func suffix(name string) string { return name[strings.IndexByte(name, '#')+1:] }

func TestRWCycle(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewRWMutex("rwA"), lockorder.NewRWMutex("rwB")
	run(func() {
		a.RLock()
		b.Lock()
		b.Unlock()
		a.RUnlock()
	})
	run(func() {
		b.RLock()
		a.Lock()
		a.Unlock()
		b.RUnlock()
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.True(t, vs[0].Cycle[0].FromRead)
	assert.False(t, vs[0].Cycle[0].ToRead)
	assert.Contains(t, vs[0].String(), "rlock(rwB)")
}

func TestReadReadCycle(t *testing.T) {
	fresh(t)
	// Zero-value locks: classes of their own, with no writer yet (named
	// classes would remember writers from an earlier run with -count).
	a, b := new(lockorder.RWMutex), new(lockorder.RWMutex)
	rr := func(x, y *lockorder.RWMutex) {
		x.RLock()
		y.RLock()
		y.RUnlock()
		x.RUnlock()
	}
	run(func() { rr(a, b) })
	run(func() { rr(b, a) })
	assert.Empty(t, lockorder.Violations(), "readers never block each other when nobody writes")

	// Once both locks have writers, a queued writer blocks new readers,
	// and the read-read inversion can deadlock.
	run(func() { a.Lock(); a.Unlock(); b.Lock(); b.Unlock() })
	run(func() { rr(a, b) }) // a seen-before chain: nothing new
	run(func() {
		var c lockorder.Mutex // a new chain through the same edges
		c.Lock()
		rr(b, a)
		c.Unlock()
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.True(t, vs[0].Cycle[0].ToRead)
}

func TestEachCycleReportedOnceAndDetectionContinues(t *testing.T) {
	fresh(t)
	a, b, c := lockorder.NewMutex("dA"), lockorder.NewMutex("dB"), lockorder.NewMutex("dC")
	run(func() { lockAB(a, b) })
	for range 5 {
		run(func() { lockAB(b, a) })
	}
	require.Len(t, only(lockorder.KindCycle), 1, "deduplicated")

	// A new cycle after the first report is still found.
	run(func() { lockAB(b, c) })
	run(func() { lockAB(c, a) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 2)
	assert.Len(t, vs[1].Cycle, 3)
	assert.Greater(t, vs[1].ID, vs[0].ID)
}

func TestGateLockSuppressesCycle(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex("gate")
	a, b := lockorder.NewMutex("gA"), lockorder.NewMutex("gB")
	gated := func(x, y sync.Locker) {
		g.Lock()
		lockAB(x, y)
		g.Unlock()
	}
	run(func() { gated(a, b) })
	run(func() { gated(b, a) })
	assert.Empty(t, lockorder.Violations(), "every edge of the cycle was taken under gate")

	// Without the gate, the same inversion can deadlock.
	run(func() { lockAB(b, a) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
}

func TestDeepConsistentNestingIsClean(t *testing.T) {
	fresh(t)
	ms := make([]*lockorder.Mutex, 20)
	for i := range ms {
		ms[i] = lockorder.NewMutex(fmt.Sprintf("deep%d", i))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				for _, m := range ms {
					m.Lock()
				}
				for i := len(ms) - 1; i >= 0; i-- {
					ms[i].Unlock()
				}
			}
		})
	}
	wg.Wait()
	assert.Empty(t, lockorder.Violations())
	nodes, edges := lockorder.GraphSize()
	assert.Equal(t, 20, nodes)
	assert.Equal(t, 20*19/2, edges)
}

func TestTryLockAddsNoEdgeInto(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("tA"), lockorder.NewMutex("tB")
	run(func() { lockAB(a, b) })
	// The classic back-off: hold B, TryLock A, give up if busy.
	run(func() {
		b.Lock()
		if a.TryLock() {
			a.Unlock()
		}
		b.Unlock()
	})
	assert.Empty(t, lockorder.Violations(), "a TryLock cannot block, so B->A is no edge")
	_, edges := lockorder.GraphSize()
	assert.Equal(t, 1, edges)
}

func TestTryLockedLockIsAPredecessor(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("pA"), lockorder.NewMutex("pB")
	run(func() {
		require.True(t, a.TryLock())
		b.Lock() // blocks while holding a: edge A->B
		b.Unlock()
		a.Unlock()
	})
	run(func() { lockAB(b, a) })
	require.Len(t, only(lockorder.KindCycle), 1)
}

func TestRLockerIsChecked(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewRWMutex("rlA"), lockorder.NewMutex("rlB")
	run(func() { lockAB(a.RLocker(), b) })
	run(func() {
		b.Lock()
		a.Lock()
		a.Unlock()
		b.Unlock()
	})
	require.Len(t, only(lockorder.KindCycle), 1, "locking through RLocker() is not a bypass")
}

func TestScenarioNamesPathsWhenOneGoroutineTookBoth(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("sameA"), lockorder.NewMutex("sameB")
	lockAB(a, b)
	lockAB(b, a)
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	s := vs[0].String()
	assert.Contains(t, s, "path 1 (goroutine ")
	assert.Contains(t, s, "path 2 (goroutine ")
	assert.Contains(t, s, "took every order of the cycle, one after the other", "the scenario says one goroutine cannot deadlock with itself")
}
