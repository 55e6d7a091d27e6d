//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A tree of balancers whose levels alternate two types, as gRPC's
// balancer tree does: each node, told of a change, updates itself under
// its own lock and tells its parent under it, which locks its own. The
// classes of the two types make a cycle, switcher -> aggregator ->
// switcher, yet no lock is ever taken on both sides of another: a node's
// parent is never its child (docs/RULES.md R26).
type roleNode struct {
	mu     *lockorder.Mutex
	parent *roleNode
}

// update locks n, then tells its parent, which does the same.
//
//go:noinline
func (n *roleNode) update() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.parent != nil {
		n.parent.update()
	}
}

// roleTree builds root <- switcher <- aggregator <- switcher, the levels
// alternating the two classes, and returns its leaf.
func roleTree() *roleNode {
	root := &roleNode{mu: lockorder.NewMutex("roles.aggregator")}
	s1 := &roleNode{mu: lockorder.NewMutex("roles.switcher"), parent: root}
	a2 := &roleNode{mu: lockorder.NewMutex("roles.aggregator"), parent: s1}
	return &roleNode{mu: lockorder.NewMutex("roles.switcher"), parent: a2}
}

func TestATreeOfTwoTypesInFixedRolesIsNoCycle(t *testing.T) {
	fresh(t)
	lockorder.AssumeAllSeen(t)
	for range 3 { // trees come and go, as tests make them
		leaf := roleTree()
		run(leaf.update)
		run(leaf.parent.update)
	}
	require.Empty(t, only(lockorder.KindCycle))
}

// The same tree, and code that locks a parent, then its child: those two
// locks are taken in both orders, which can deadlock.
func TestATreeWhoseLocksAreTakenBothWaysIsACycle(t *testing.T) {
	fresh(t)
	leaf := roleTree()
	run(leaf.update)
	mid := leaf.parent // an aggregator, under a switcher
	run(func() {
		mid.parent.mu.Lock()
		mid.mu.Lock()
		mid.mu.Unlock()
		mid.parent.mu.Unlock()
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	require.Len(t, vs[0].Cycle, 2)
}

// A tree whose nodes hold their own lock for reading when they tell the
// parent: the engine knows the edges into a named class by the class
// there (R2's chain key), so not every pair of locks is seen, and the
// class cycle is reported as before R26.
func TestATreeUnderReadHoldsIsReportedAsAClassCycle(t *testing.T) {
	fresh(t)
	root := lockorder.NewRWMutex("roles.rw.aggregator")
	s1 := lockorder.NewRWMutex("roles.rw.switcher")
	a2 := lockorder.NewRWMutex("roles.rw.aggregator")
	for _, l := range []*lockorder.RWMutex{root, s1, a2} {
		l.Lock() // written: read edges into them can block (R4)
		l.Unlock()
	}
	run(func() {
		s1.RLock()
		root.Lock()
		root.Unlock()
		s1.RUnlock()
	})
	run(func() {
		a2.RLock()
		s1.Lock()
		s1.Unlock()
		a2.RUnlock()
	})
	require.Len(t, only(lockorder.KindCycle), 1)
}

// An acquisition made holding too many locks to record edges (R25)
// leaves its pairs of locks unseen: R26 then holds nothing back, and a
// tree's class cycle it held back is reported.
func TestAnAcquisitionTooDeepToRecordEndsTheRolesRule(t *testing.T) {
	fresh(t)
	lockorder.AssumeAllSeen(t)
	leaf := roleTree()
	run(leaf.update)
	require.Empty(t, only(lockorder.KindCycle), "held back by R26")
	run(func() {
		locks := make([]lockorder.Mutex, 257)
		for i := range locks {
			locks[i].Lock()
		}
		for i := len(locks) - 1; i >= 0; i-- {
			locks[i].Unlock()
		}
	})
	require.Len(t, only(lockorder.KindCycle), 1)
}

// pairOf returns a function that locks x, then y.
func pairOf(x, y *lockorder.Mutex) func() {
	return func() { lockAB(x, y) }
}

// A cycle of locks is reported however it walks the classes: two laps
// of a cycle of two classes (four philosophers of two kinds), a closed
// walk through three classes that is no lap of one cycle, or a hop
// between two locks of one class (R2), each taken by goroutines that
// can deadlock.
func TestACycleOfLocksIsReportedHoweverItWalksTheClasses(t *testing.T) {
	t.Run("two laps", func(t *testing.T) {
		fresh(t)
		a1, a2 := lockorder.NewMutex("roles.ring.a"), lockorder.NewMutex("roles.ring.a")
		b1, b2 := lockorder.NewMutex("roles.ring.b"), lockorder.NewMutex("roles.ring.b")
		run(pairOf(a1, b1))
		run(pairOf(b1, a2))
		run(pairOf(a2, b2))
		run(pairOf(b2, a1))
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
	t.Run("through three classes", func(t *testing.T) {
		fresh(t)
		a1, a2 := lockorder.NewMutex("roles.walk.a"), lockorder.NewMutex("roles.walk.a")
		b1, b2 := lockorder.NewMutex("roles.walk.b"), lockorder.NewMutex("roles.walk.b")
		c1 := lockorder.NewMutex("roles.walk.c")
		run(pairOf(a1, b1))
		run(pairOf(b1, c1))
		run(pairOf(c1, a2))
		run(pairOf(a2, b2))
		run(pairOf(b2, a1))
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
	t.Run("a hop within a class", func(t *testing.T) {
		fresh(t)
		var registry lockorder.Mutex
		a1, a2 := lockorder.NewMutex("roles.acct"), lockorder.NewMutex("roles.acct")
		run(pairOf(&registry, a1)) // look up, then lock the account
		run(pairOf(a1, a2))        // a transfer, ordered by id
		run(pairOf(a2, &registry)) // an account registers under its lock
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
}

// A pair of locks counts once sighted, whether or not its edge reaches
// the graph: an edge from a read hold dropped past the bound of waiting
// edges (R12), or spoiled by another reader's hand-off (R13), and one
// from a write hold dropped by a mode switch while it waited (R23). The
// locks are then taken the other way: a cycle of locks, reported.
func TestAPairSightedCountsWhetherItsEdgeIsAddedOrNot(t *testing.T) {
	inverse := func(x *lockorder.RWMutex, y *lockorder.Mutex) {
		run(func() { y.Lock(); x.Lock(); x.Unlock(); y.Unlock() })
	}
	other := func(x *lockorder.RWMutex, y *lockorder.Mutex) {
		run(func() { x.RLock(); y.Lock(); y.Unlock(); x.RUnlock() })
	}
	t.Run("past the bound of waiting edges", func(t *testing.T) {
		fresh(t)
		x1, x2 := lockorder.NewRWMutex("roles.rw.x"), lockorder.NewRWMutex("roles.rw.x")
		var y lockorder.Mutex
		run(func() {
			x1.RLock()
			y.Lock()
			y.Unlock()
			zs := make([]lockorder.Mutex, 70)
			for i := range zs {
				zs[i].Lock()
				zs[i].Unlock()
			}
			x1.RUnlock()
		})
		other(x2, &y)
		inverse(x1, &y)
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
	t.Run("spoiled by a hand-off", func(t *testing.T) {
		fresh(t)
		x1, x2 := lockorder.NewRWMutex("roles.spoil.x"), lockorder.NewRWMutex("roles.spoil.x")
		var y lockorder.Mutex
		run(func() {
			x1.RLock()
			y.Lock()
			y.Unlock()
			run(x1.RLock)   // a read transaction begun here
			run(x1.RUnlock) // and ended there
			x1.RUnlock()
		})
		other(x2, &y)
		inverse(x1, &y)
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
	t.Run("a mode switch", func(t *testing.T) {
		fresh(t)
		lockorder.AssumeAllSeen(t)
		x1, x2 := lockorder.NewMutex("roles.mode.x"), lockorder.NewMutex("roles.mode.x")
		var y lockorder.Mutex
		run(pairOf(x2, &y))
		run(pairOf(&y, x1))
		require.Empty(t, only(lockorder.KindCycle), "held back by R26: y met")
		run(func() {
			x1.Lock()
			y.Lock()
			y.Unlock()
			run(func() {
				lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
				lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
			})
			x1.Unlock()
		})
		require.NotEmpty(t, only(lockorder.KindCycle), "x1 and y taken both ways in check mode")
	})
}

// Pairs a goroutine makes while no edge is recorded, that could have
// waited, still count: a Wait kept for its group's first Go (R22) under
// a read hold, and a Do on a done Once by a goroutine that may have
// forgotten the Onces it saw done (R16). Each run then takes the locks
// the other way: a cycle of locks, reported.
func TestPairsWithNoEdgeYetCount(t *testing.T) {
	t.Run("a Wait kept for the first Go", func(t *testing.T) {
		fresh(t)
		lockorder.AssumeAllSeen(t)
		r1, r2 := lockorder.NewRWMutex("roles.wg.r"), lockorder.NewRWMutex("roles.wg.r")
		var u lockorder.Mutex
		var wg lockorder.WaitGroup
		run(func() { r1.RLock(); wg.Wait(); r1.RUnlock() }) // kept: no Go yet
		wg.Go(func() { u.Lock(); u.Unlock() })
		wg.Wait()
		run(func() { r2.RLock(); wg.Wait(); r2.RUnlock() })
		run(func() { u.Lock(); r1.Lock(); r1.Unlock(); u.Unlock() }) // r1 -> wg -> u -> r1
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
	t.Run("a forgetful Do on a done Once", func(t *testing.T) {
		fresh(t)
		lockorder.AssumeAllSeen(t)
		h1, h3 := lockorder.NewMutex("roles.once.h"), lockorder.NewMutex("roles.once.h")
		var o lockorder.Once
		var u lockorder.Mutex
		run(func() { o.Do(func() { u.Lock(); u.Unlock() }) })
		run(func() { u.Lock(); h3.Lock(); h3.Unlock(); u.Unlock() })
		run(func() { h1.Lock(); o.Do(func() {}); h1.Unlock() })
		require.Empty(t, only(lockorder.KindCycle), "held back by R26: o met")
		run(func() {
			var others [9]lockorder.Once // more than a goroutine remembers
			for i := range others {
				others[i].Do(func() {})
			}
			h3.Lock()
			o.Do(func() {}) // h3 -> o -> u -> h3
			h3.Unlock()
		})
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
}

// Holds the engine dropped (turning the held profile on renews every
// goroutine's bookkeeping) and a used lock copied make pairs unseen: R26
// holds nothing back from then on, and the cycle it held is reported at
// the next new chain.
func TestUnseenHoldsOrCopiesEndTheRolesRule(t *testing.T) {
	setup := func(t *testing.T, name string) (x1, y1 *lockorder.Mutex) {
		fresh(t)
		lockorder.AssumeAllSeen(t)
		x1, y1, y2 := lockorder.NewMutex(name+".x"), lockorder.NewMutex(name+".y"), lockorder.NewMutex(name+".y")
		run(pairOf(x1, y1))
		run(pairOf(y2, x1))
		require.Empty(t, only(lockorder.KindCycle), "held back by R26: x1 met")
		return x1, y1
	}
	next := func() {
		var a, b lockorder.Mutex
		run(func() { lockAB(&a, &b) })
	}
	t.Run("held profile toggled under a hold", func(t *testing.T) {
		x1, y1 := setup(t, "roles.toggle")
		t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
		run(func() {
			y1.Lock()
			lockorder.Configure(lockorder.WithHeldProfile(true))
			x1.Lock() // y1 -> x1, unseen: y1's hold was dropped
			x1.Unlock()
			y1.Unlock()
		})
		next()
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
	t.Run("a used lock copied", func(t *testing.T) {
		x1, _ := setup(t, "roles.copy")
		c := copyOf(x1)               // x1's identity, until a goroutine takes both
		run(func() { lockAB(x1, c) }) // reported as a copy, and c rebound
		next()
		require.NotEmpty(t, only(lockorder.KindCycle))
	})
}

// A class's own pair that closes a cycle of locks reports it, even where
// the class's first edge held back is one every cycle through which a
// common lock holds back (R6): C <-> X under g, then C <-> D in fixed
// roles, then c12 -> c11 closes c11 -> d10 -> c12 -> c11.
func TestAPairOfOneClassClosingACycleOfLocksIsReported(t *testing.T) {
	for _, gated := range []bool{false, true} {
		fresh(t)
		lockorder.AssumeAllSeen(t)
		c := func() *lockorder.Mutex { return lockorder.NewMutex("roles.own.c") }
		c1, c2, c11, c12 := c(), c(), c(), c()
		x1, x2 := lockorder.NewMutex("roles.own.x"), lockorder.NewMutex("roles.own.x")
		d10 := lockorder.NewMutex("roles.own.d")
		if gated {
			g := lockorder.NewMutex("roles.own.g")
			run(func() { g.Lock(); lockAB(c1, x1); g.Unlock() })
			run(func() { g.Lock(); lockAB(x2, c2); g.Unlock() })
			require.Empty(t, only(lockorder.KindCycle), "C <-> X under g")
		}
		run(pairOf(c11, d10))
		run(pairOf(d10, c12))
		require.Empty(t, only(lockorder.KindCycle), "C <-> D in fixed roles")
		run(pairOf(c12, c11))
		require.NotEmpty(t, only(lockorder.KindCycle), "gated %v", gated)
	}
}
