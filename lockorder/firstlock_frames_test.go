//go:build !syncwatch_off

package lockorder_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// probeCycle takes fresh b under a with take (called at a line the caller
// reports), then b before a, and returns the edge a -> b of the cycle.
func probeCycle(t *testing.T, a *lockorder.Mutex, b sync.Locker, take func(), release ...func()) lockorder.Edge {
	t.Helper()
	a.Lock()
	take()
	if len(release) > 0 {
		release[0]()
	} else {
		b.Unlock()
	}
	a.Unlock()
	b.Lock()
	a.Lock()
	a.Unlock()
	b.Unlock()
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	for _, e := range vs[0].Cycle {
		if e.From == "probe-a" {
			return e
		}
	}
	t.Fatalf("no edge from probe-a in %v", vs[0].Cycle)
	return lockorder.Edge{}
}

//go:noinline
func onceDeep(n int, f func()) {
	if n == 0 {
		f()
		return
	}
	var o sync.Once
	o.Do(func() { onceDeep(n-1, f) })
}

// lockAt locks m for writing: the one line every acquisition below is
// made at.
//
//go:noinline
func lockAt(m sync.Locker) { m.Lock() }

// The edge into a lock first taken under another keeps as much of the
// stack as the edge into a lock that had an identity already, taken at the
// same line from the same stack: whether the lock is fresh does not cut
// the report short. Here the stack is deep and its frames alternate with
// sync's (sync.Once.Do), which the report leaves out: the unwind's budget
// (stack.MaxDepth+6 return addresses) is what bounds the frames shown.
func TestAFreshLockEdgeKeepsTheFramesOfAKnownOne(t *testing.T) {
	for _, kind := range []string{"Mutex", "RWMutex"} {
		for _, depth := range []int{12} {
			t.Run(kind+"/depth="+strconv.Itoa(depth), func(t *testing.T) {
				mk := func() (sync.Locker, func()) {
					if kind == "Mutex" {
						m := new(lockorder.Mutex)
						return m, func() {
							if m.TryLock() {
								m.Unlock()
							}
						}
					}
					m := new(lockorder.RWMutex)
					return m, func() {
						if m.TryLock() {
							m.Unlock()
						}
					}
				}
				edge := func(known bool) lockorder.Edge {
					fresh(t)
					a := lockorder.NewMutex("probe-a")
					b, identify := mk()
					if known {
						identify() // b has an identity before it is first taken under a
					}
					return probeCycle(t, a, b, func() { onceDeep(depth, func() { lockAt(b) }) })
				}
				known, fresh := edge(true), edge(false)
				require.NotEmpty(t, fresh.Stack)
				require.Equal(t, "lockAt", fresh.Stack[0].Function[strings.LastIndexByte(fresh.Stack[0].Function, '.')+1:])
				require.GreaterOrEqual(t, len(fresh.Stack), len(known.Stack),
					"frames of the edge into a fresh lock vs a known one at the same place\nfresh:\n%s\nknown:\n%s", fresh.Stack, known.Stack)
			})
		}
	}
}
