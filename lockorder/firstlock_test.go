//go:build !syncwatch_off

package lockorder_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A zero-value lock's first check-mode acquisition takes one stack that
// names the lock, records where it was first taken, and, under another
// lock, is its new chain's stack. These pin all three on the paths that
// share it: Mutex.Lock, RWMutex.Lock and RWMutex.RLock, each with nothing
// held and under a lock.

// A lock first taken with nothing held, left held by a goroutine that
// exits: named after the line that first locked it, and the report says
// that line is where it was first taken.
func TestAFreshLockIsNamedAndFirstTakenWhereItWasLocked(t *testing.T) {
	for _, c := range []struct {
		name string
		take func(*int) (unlock func())
	}{
		{"Mutex", func(line *int) func() {
			var m lockorder.Mutex
			*line = here() + 1
			m.Lock()
			return m.Unlock
		}},
		{"RWMutex", func(line *int) func() {
			var m lockorder.RWMutex
			*line = here() + 1
			m.Lock()
			return m.Unlock
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fresh(t)
			var line int
			unlock := takeAndExit(func() func() { return c.take(&line) })
			waitUntil(t, func() bool { return !parkedIn("lockorder_test.takeAndExit.func1", "") }, "the goroutine's exit")
			site := "firstlock_test.go:" + strconv.Itoa(line)
			lockorder.ReportBlockedExcept(0, false, func(v lockorder.Violation) bool {
				return len(v.Locks) != 1 || !strings.Contains(v.Locks[0].Name, site)
			})
			unlock()
			vs := only(lockorder.KindHeldByExited)
			require.Len(t, vs, 1)
			v := vs[0]
			require.Len(t, v.Locks, 1)
			assert.Contains(t, v.Locks[0].Name, site, "the lock is named after the line that first locked it")
			require.NotEmpty(t, v.Stack)
			assert.Equal(t, line, v.Stack[0].Line, "the report's stack starts where the lock was first taken:\n%s", v.Stack)
			assert.Contains(t, v.String(), "where the lock was first taken")
		})
	}
}

// A lock first taken under another lock: the edge's stack in the cycle it
// closes, and the lock's name, are the line that first locked it, for a
// write of a Mutex or an RWMutex and a read of an RWMutex.
func TestAFreshLockUnderAnotherRecordsItsFirstLineInTheCycle(t *testing.T) {
	for _, c := range []struct {
		name string
		// take returns b, fresh, and how to take it and release it.
		take func() (b sync2, take, release func())
	}{
		{"Mutex", func() (sync2, func(), func()) { b := new(lockorder.Mutex); return b, b.Lock, b.Unlock }},
		{"RWMutex", func() (sync2, func(), func()) { b := new(lockorder.RWMutex); return b, b.Lock, b.Unlock }},
		{"RWMutex.RLock", func() (sync2, func(), func()) { b := new(lockorder.RWMutex); return b, b.RLock, b.RUnlock }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fresh(t)
			a := lockorder.NewMutex("first-a")
			b, take, release := c.take()
			a.Lock()
			line := here() + 1
			take()
			release()
			a.Unlock()
			b.Lock() // a write, so that a read into b's class can block (R4)
			a.Lock()
			a.Unlock()
			b.Unlock()
			vs := only(lockorder.KindCycle)
			require.Len(t, vs, 1, "one cycle: first-a -> b -> first-a")
			v := vs[0]
			site := "firstlock_test.go:" + strconv.Itoa(line)
			var into *lockorder.Edge
			for i := range v.Cycle {
				if v.Cycle[i].From == "first-a" {
					into = &v.Cycle[i]
				}
			}
			require.NotNil(t, into, "an edge from first-a in %v", v.Cycle)
			assert.Contains(t, into.To, site, "b is named after the line that first locked it")
			require.NotEmpty(t, into.Stack)
			assert.Equal(t, line, into.Stack[0].Line, "the edge's stack starts where b was first locked:\n%s", into.Stack)
		})
	}
}

// sync2 is a lock to take for writing.
type sync2 interface {
	Lock()
	Unlock()
}

// takeAndExit runs take in a goroutine that exits holding what it took,
// and returns, once take has, the function that releases it.
func takeAndExit(take func() (unlock func())) func() {
	var unlock func()
	done := make(chan struct{})
	go func() {
		defer close(done)
		unlock = take()
	}()
	<-done
	return unlock
}

// A fresh WaitGroup first used by a Wait under a lock: its name and the
// kept edge's stack (R22), replayed at the first Go into a cycle, are the
// Wait's line.
func TestAFreshGroupWaitedUnderALockRecordsItsFirstLineInTheCycle(t *testing.T) {
	fresh(t)
	mu := lockorder.NewMutex("first-wg-mu")
	var wg lockorder.WaitGroup
	var line int
	run(func() {
		mu.Lock()
		line = here() + 1
		wg.Wait()
		mu.Unlock()
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		wg.Go(func() { mu.Lock(); mu.Unlock() })
		wg.Wait()
	}()
	<-done
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "one cycle: first-wg-mu -> the group -> first-wg-mu")
	assertFirstLine(t, vs[0], "first-wg-mu", line)
}

// assertFirstLine asserts that the edge of v from the lock named from
// goes into a primitive named after the test's line, where its stack
// starts.
func assertFirstLine(t *testing.T, v lockorder.Violation, from string, line int) {
	t.Helper()
	site := "firstlock_test.go:" + strconv.Itoa(line)
	var into *lockorder.Edge
	for i := range v.Cycle {
		if v.Cycle[i].From == from {
			into = &v.Cycle[i]
		}
	}
	require.NotNil(t, into, "an edge from %s in %v", from, v.Cycle)
	assert.Contains(t, into.To, site, "named after the line that first used it")
	require.NotEmpty(t, into.Stack)
	assert.Equal(t, line, into.Stack[0].Line, "the edge's stack starts at that line:\n%s", into.Stack)
}

// A fresh Once first done under a lock: its name and the edge's stack in
// the cycle it closes are the Do's line (one unwind serves both). The
// function releases x before it takes mu, so that the cycle goes through
// the Once: x -> Once -> mu -> x.
func TestAFreshOnceDoneUnderALockRecordsItsFirstLineInTheCycle(t *testing.T) {
	fresh(t)
	x, mu := lockorder.NewMutex("first-once-x"), lockorder.NewMutex("first-once-mu")
	var once lockorder.Once
	var line int
	run(func() {
		x.Lock()
		line = here() + 1
		once.Do(func() { x.Unlock(); mu.Lock(); mu.Unlock() })
	})
	run(func() {
		mu.Lock()
		x.Lock()
		x.Unlock()
		mu.Unlock()
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "one cycle: first-once-x -> the Once -> first-once-mu -> first-once-x")
	assertFirstLine(t, vs[0], "first-once-x", line)
}
