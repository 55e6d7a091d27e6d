//go:build !syncwatch_off

package lockorder_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// copyOf returns a copy of *m made the way go vet's copylocks check cannot
// see, as a program that copies a struct holding a mutex through an
// interface or reflection does.
func copyOf[M any](m *M) *M {
	c := new(M)
	reflect.ValueOf(c).Elem().Set(reflect.ValueOf(m).Elem())
	return c
}

func TestCopiedMutexIsReportedNotRecursive(t *testing.T) {
	for _, copyFirst := range []bool{false, true} {
		name := map[bool]string{false: "origfirst", true: "copyfirst"}[copyFirst]
		t.Run(name, func(t *testing.T) {
			fresh(t)
			orig := lockorder.NewMutex(name)
			cp := copyOf(orig)
			first, second := orig, cp
			if copyFirst {
				first, second = cp, orig
			}
			run(func() { lockAB(first, second) }) // does not block: two sync locks
			assert.Empty(t, only(lockorder.KindRecursiveLock))
			vs := only(lockorder.KindCopiedLock)
			require.Len(t, vs, 1)
			v := vs[0]
			require.Len(t, v.Locks, 2)
			assert.Equal(t, name+"#1", v.Locks[0].Name)
			assert.Equal(t, name+"#2", v.Locks[1].Name)
			require.NotEmpty(t, v.Stack)
			assert.Contains(t, v.Stack[0].Function, "lockAB")

			// The two are now two instances of one class, checked as such:
			// the same order again is fine, the other order is a cycle.
			run(func() { lockAB(first, second) })
			require.Len(t, lockorder.Violations(), 1)
			run(func() { lockAB(second, first) })
			assert.Len(t, only(lockorder.KindCycle), 1)
			assert.Len(t, only(lockorder.KindCopiedLock), 1)
		})
	}
}

// A copy locked twice is a recursive lock like any other.
func TestCopiedMutexLockedTwiceIsRecursive(t *testing.T) {
	reportDeadlocks(t)
	cp := copyOf(lockorder.NewMutex("copiedrec"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		cp.Lock()
		cp.Lock() // blocks; reported on evidence
		cp.Unlock()
	}()
	waitUntil(t, func() bool { return len(only(lockorder.KindRecursiveLock)) == 1 }, "the recursive-lock report")
	select {
	case <-done:
		t.Fatal("the second Lock did not block")
	case <-time.After(20 * time.Millisecond):
	}
	cp.Unlock()
	<-done
	assert.Empty(t, only(lockorder.KindCopiedLock))
}

// A zero-value mutex copied after first use is caught the same way, and
// the copy gets a class of its own.
func TestZeroValueMutexCopiedAfterFirstUse(t *testing.T) {
	fresh(t)
	var orig lockorder.Mutex
	orig.Lock()
	orig.Unlock()
	cp := copyOf(&orig)
	run(func() { lockAB(&orig, cp) })
	vs := only(lockorder.KindCopiedLock)
	require.Len(t, vs, 1)
	require.Len(t, vs[0].Locks, 2)
	// The copy is a lock of its own, named after the same code: that of
	// the field it is a copy of.
	assert.NotEqual(t, vs[0].Locks[0].ID, vs[0].Locks[1].ID)
	assert.NotEqual(t, vs[0].Locks[0].Name, vs[0].Locks[1].Name)
	assert.Equal(t, vs[0].Locks[0].Class, vs[0].Locks[1].Class)
	assert.True(t, strings.HasPrefix(vs[0].Locks[1].Name, "lockorder_test.TestZeroValueMutexCopiedAfterFirstUse (copied_test.go:"), vs[0].Locks[1].Name)
	assert.Empty(t, only(lockorder.KindRecursiveLock))
}

func TestCopiedRWMutex(t *testing.T) {
	fresh(t)
	orig := lockorder.NewRWMutex("copiedrw")
	cp := copyOf(orig)
	run(func() {
		orig.RLock()
		cp.RLock() // not a recursive read lock: another lock
		cp.RUnlock()
		orig.RUnlock()
	})
	assert.Empty(t, only(lockorder.KindRecursiveRLock))
	require.Len(t, only(lockorder.KindCopiedLock), 1)
	assert.Contains(t, only(lockorder.KindCopiedLock)[0].Message, "the RWMutex at")

	// A real recursive read lock, of either, is still one.
	run(func() {
		cp.RLock()
		cp.RLock()
		cp.RUnlock()
		cp.RUnlock()
	})
	assert.Len(t, only(lockorder.KindRecursiveRLock), 1)
}

// A copy of a used RWMutex read-locked while its original is read-locked
// is told, as a Mutex's is.
func TestACopyReadLockedAfterItsOriginalIsTold(t *testing.T) {
	fresh(t)
	orig := lockorder.NewRWMutex("rv1")
	cp := copyOf(orig)
	run(func() {
		orig.RLock()
		cp.RLock()
		cp.RUnlock()
		orig.RUnlock()
	})
	assert.Len(t, only(lockorder.KindCopiedLock), 1)
	assert.Len(t, lockorder.Violations(), 1)
}

// A copy read-locked before its original, which is then locked, is told
// too (once a read hand-off under way is ruled out: see recursive), and
// nothing else is reported: a lock-order cycle between the two, seen as
// one identity, would be false.
func TestACopyReadLockedBeforeItsOriginalIsTold(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(orig, cp *lockorder.RWMutex, x *lockorder.Mutex)
	}{
		{"rlock", func(orig, cp *lockorder.RWMutex, x *lockorder.Mutex) {
			cp.RLock()
			orig.RLock()
			orig.RUnlock()
			cp.RUnlock()
		}},
		{"rlock out of order", func(orig, cp *lockorder.RWMutex, x *lockorder.Mutex) {
			cp.RLock()
			orig.RLock()
			cp.RUnlock()
			orig.RUnlock()
		}},
		{"lock", func(orig, cp *lockorder.RWMutex, x *lockorder.Mutex) {
			cp.RLock()
			orig.Lock()
			orig.Unlock()
			cp.RUnlock()
		}},
		{"lock out of order", func(orig, cp *lockorder.RWMutex, x *lockorder.Mutex) {
			cp.RLock()
			orig.Lock()
			cp.RUnlock()
			orig.Unlock()
		}},
		{"rlock under x", func(orig, cp *lockorder.RWMutex, x *lockorder.Mutex) {
			cp.RLock()
			x.Lock()
			orig.RLock()
			orig.RUnlock()
			x.Unlock()
			cp.RUnlock()
		}},
		{"lock under x", func(orig, cp *lockorder.RWMutex, x *lockorder.Mutex) {
			cp.RLock()
			x.Lock()
			orig.Lock()
			orig.Unlock()
			x.Unlock()
			cp.RUnlock()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh(t)
			orig := new(lockorder.RWMutex)
			orig.RLock()
			orig.RUnlock()
			cp := copyOf(orig)
			x := new(lockorder.Mutex)
			run(func() { tc.f(orig, cp, x) })
			// afterwards: ordinary use of each goes on without reports
			run(func() {
				orig.RLock()
				orig.RUnlock()
				cp.Lock()
				cp.Unlock()
				x.Lock()
				orig.RLock()
				orig.RUnlock()
				x.Unlock()
			})
			assert.Len(t, only(lockorder.KindCopiedLock), 1)
			assert.Empty(t, only(lockorder.KindCycle))
			assert.Empty(t, only(lockorder.KindBadUnlock))
			assert.Empty(t, only(lockorder.KindNotHeld))
			assert.Empty(t, only(lockorder.KindRecursiveRLock))
			assert.Empty(t, only(lockorder.KindRecursiveLock))
		})
	}
}
