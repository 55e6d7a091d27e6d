//go:build !syncwatch_off

package lockorder_test

import (
	"bytes"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

func TestHeldProfileIsRegistered(t *testing.T) {
	p := pprof.Lookup(lockorder.HeldProfileName)
	require.NotNil(t, p)
	assert.Equal(t, lockorder.HeldProfileName, p.Name())
	assert.True(t, slices.ContainsFunc(pprof.Profiles(), func(q *pprof.Profile) bool { return q == p }),
		"listed by pprof.Profiles, hence by /debug/pprof/")
}

//go:noinline
func heldProfileWaiter(release <-chan struct{}) { lockorder.WaitNoted(release) }

// heldSamples returns the samples of the held profile that have fn on their
// stack, reading the profile as go tool pprof would.
func heldSamples(t *testing.T, fn string) []*profile.Sample {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, pprof.Lookup(lockorder.HeldProfileName).WriteTo(&buf, 0))
	p, err := profile.Parse(&buf)
	require.NoError(t, err)
	var out []*profile.Sample
	for _, s := range p.Sample {
		if slices.ContainsFunc(functions(s), func(f string) bool { return strings.HasSuffix(f, fn) }) {
			out = append(out, s)
		}
	}
	return out
}

// heldWaiters returns how many goroutines the held profile shows with fn on
// their stack.
func heldWaiters(t *testing.T, fn string) int64 {
	t.Helper()
	var n int64
	for _, s := range heldSamples(t, fn) {
		n += s.Value[0]
	}
	return n
}

func TestHeldProfileListsWaitsInProgress(t *testing.T) {
	const fn = "lockorder_test.heldProfileWaiter"
	require.Zero(t, heldWaiters(t, fn))

	release := make(chan struct{})
	done := make(chan struct{})
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			heldProfileWaiter(release)
		}()
	}
	waitFor(t, func() bool { return heldWaiters(t, fn) == 2 }, "two waits in the held profile")
	for _, s := range heldSamples(t, fn) {
		assert.Equal(t, "github.com/syncwatch/syncwatch/lockorder.WaitNoted", functions(s)[0],
			"the stack starts in the function that noted the wait")
	}
	var text bytes.Buffer
	require.NoError(t, pprof.Lookup(lockorder.HeldProfileName).WriteTo(&text, 1))
	assert.Contains(t, text.String(), fn, "the text form names the waiter's function")

	close(release)
	<-done
	<-done
	assert.Zero(t, heldWaiters(t, fn), "an entry ends with its wait")
}

func TestHeldProfileShowsContendedLock(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithHeldProfile(true))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	m := lockorder.NewMutex("held-contended")
	const fn = "lockorder_test.lockContended"
	m.Lock()
	done := make(chan struct{})
	go func() { defer close(done); lockContended(m) }()
	waitFor(t, func() bool { return heldWaiters(t, fn) == 1 }, "the contended Lock in the held profile")
	for _, s := range heldSamples(t, fn) {
		assert.Equal(t, "github.com/syncwatch/syncwatch/lockorder.checkWait", functions(s)[0])
	}
	m.Unlock()
	<-done
	assert.Zero(t, heldWaiters(t, fn))
}

func TestHeldProfileOffByDefault(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("held-off")
	const fn = "lockorder_test.lockContended"
	m.Lock()
	done := make(chan struct{})
	go func() { defer close(done); lockContended(m) }()
	time.Sleep(20 * time.Millisecond)
	assert.Zero(t, heldWaiters(t, fn), "nothing is noted unless WithHeldProfile(true)")
	m.Unlock()
	<-done
}
