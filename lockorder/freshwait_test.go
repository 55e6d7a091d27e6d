//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
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
