//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// contend makes exactly one contended wait on m: the test locks m, starts a
// goroutine that locks it (in lockContended), waits until that goroutine is
// parked in sync's queue, which it reaches only after lockorder's spin and
// the start of the timed wait, and then unlocks. It returns once the waiter
// has taken and released m, so its wait has been observed.
func contend(t *testing.T, m *lockorder.Mutex) {
	t.Helper()
	m.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		lockContended(m)
	}()
	waitParked(t, "lockorder_test.lockContended(")
	m.Unlock()
	<-done
}

//go:noinline
func lockContended(m *lockorder.Mutex) {
	m.Lock()
	m.Unlock()
}

// waitParked returns once a goroutine whose stack contains fn is parked in
// lockorder's contended wait.
func waitParked(t *testing.T, fn string) {
	t.Helper()
	waitUntil(t, func() bool { return parked(fn) }, fn+" parked on a lock")
}

func parked(fn string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		// A Mutex waits in sync's queue; an RWMutex in internal/rwlock's
		// channels.
		waiting := strings.Contains(header, "[sync.") || strings.Contains(header, "[chan receive")
		if waiting && strings.Contains(g, fn) &&
			(strings.Contains(g, "lockorder.checkWait(") || strings.Contains(g, "lockorder.traceWait(")) {
			return true
		}
	}
	return false
}

// nameOf returns m's name, read while the calling goroutine holds m.
func nameOf(t *testing.T, m *lockorder.Mutex) string {
	t.Helper()
	m.Lock()
	held := lockorder.HeldLocks()
	m.Unlock()
	require.Len(t, held, 1)
	return held[0].Name
}
