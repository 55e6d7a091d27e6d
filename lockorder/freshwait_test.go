//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// A group's first Wait, made under a lock, names the group and takes the
// Wait's stack in one unwind; the Waits after it at the same line, on a
// named group, take their own. Both start at the caller's line: the
// three Waits are one kept Wait (R22), and the edge mu -> group that the
// first Go's cycle reports was taken at the test's own line, named after
// it.
func TestAFirstWaitUnderALockIsOneWithTheWaitsAfterIt(t *testing.T) {
	fresh(t)
	mu := lockorder.NewMutex("fresh-wait-mu")
	var wg lockorder.WaitGroup
	var line int
	run(func() {
		for range 3 {
			mu.Lock()
			_, _, line, _ = runtime.Caller(0)
			wg.Wait() // the line after the one above
			mu.Unlock()
		}
	})
	assert.Equal(t, 1, lockorder.KeptWaits(&wg), "the first Wait and the two after it are one")
	wg.Go(func() {
		mu.Lock()
		mu.Unlock()
	})
	wg.Wait()
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "mu -> group -> mu")
	var found bool
	for _, e := range vs[0].Cycle {
		if e.From != "fresh-wait-mu" {
			continue
		}
		found = true
		require.NotEmpty(t, e.Stack, "%s", vs[0].Message)
		assert.Equal(t, line+1, e.Stack[0].Line, "the edge's stack starts at the Wait: %s", vs[0].Message)
		assert.Contains(t, e.Stack[0].File, "freshwait_test.go")
		assert.Contains(t, e.To, "freshwait_test.go", "the group is named after its first use")
	}
	assert.True(t, found, "the cycle has the edge from mu: %s", vs[0].Message)
}

// onceFuncVar is sync.OnceFunc through a variable: not inlined, its
// closures stay sync's frames between the user's line and Wait.
var onceFuncVar = sync.OnceFunc

// A group first used by a Wait that is not nested, in check or trace
// mode, is named from Wait's own frame as before: callerSite finds the
// user's line past sync's frames (a review of the first Wait's trace
// found a group named by its address through sync.OnceFunc).
func TestAFirstWaitNotNestedNamesTheUsersLinePastSyncsFrames(t *testing.T) {
	for _, mode := range []lockorder.Mode{lockorder.ModeCheck, lockorder.ModeTrace} {
		t.Run(mode.String(), func(t *testing.T) {
			fresh(t)
			lockorder.Configure(lockorder.WithMode(mode), lockorder.WithHandler(func(lockorder.Violation) {}))
			wg := new(lockorder.WaitGroup)
			f := onceFuncVar(wg.Wait)
			run(func() { f() }) // the group's first use names it
			lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
			mu := lockorder.NewMutex("first-wait-mu")
			run(func() { mu.Lock(); wg.Wait(); mu.Unlock() })
			wg.Go(func() { mu.Lock(); mu.Unlock() })
			wg.Wait()
			vs := only(lockorder.KindCycle)
			require.Len(t, vs, 1, "first-wait-mu -> group -> first-wait-mu")
			for _, l := range vs[0].Locks {
				if l.Name != "first-wait-mu" {
					assert.Contains(t, l.Name, "freshwait_test.go", "%s", vs[0].Message)
				}
			}
		})
	}
}
