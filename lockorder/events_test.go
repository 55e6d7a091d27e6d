//go:build !syncwatch_off

package lockorder_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
)

// Events the tests wait on (with waitUntil or pollBusy, in poll_test.go):
// a goroutine's wait registered with the monitor, and the monitor's look
// into the waits. (waitParked, in contend_test.go, waits for a goroutine
// parked in a contended Lock, as its stack shows it.)

// waitsOn returns how many goroutines wait for the lock named name, or
// name#N: their waits are registered, so they are blocked or about to
// block.
func waitsOn(name string) int {
	n := 0
	for _, w := range waitfor.All() {
		if l := w.Name(); w.IsLock() && (l == name || strings.HasPrefix(l, name+"#")) {
			n++
		}
	}
	return n
}

// waitingOn returns once n goroutines wait for the lock named name.
func waitingOn(t *testing.T, name string, n int) {
	assert.True(t, pollBusy(func() bool { return waitsOn(name) >= n }), "%d goroutines wait for %s", n, name)
}

// shortGrace sets the monitor's grace period to a millisecond for the
// test: a cycle of waits is looked into at the monitor's second look at
// it, rather than two seconds on.
func shortGrace(t *testing.T) {
	lockorder.Configure(lockorder.WithDeadlockGrace(time.Millisecond))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithDeadlockGrace(0)) })
}

// busyUntilLookedInto returns once the monitor has looked for evidence
// about the waits registered now (a goroutine dump) and delivered what it
// found: past the grace period, for a cycle of them. The caller stays
// busy meanwhile (see pollBusy), as a worker still at its work is.
func busyUntilLookedInto(t *testing.T) {
	n := waitfor.Inquiries()
	assert.True(t, pollBusy(func() bool { return waitfor.Inquiries() > n }), "the monitor looks into the waits")
}

// waitingInCond returns once n goroutines wait in a Cond.
func waitingInCond(t *testing.T, n int) {
	assert.True(t, pollBusy(func() bool {
		k := 0
		for _, w := range waitfor.All() {
			if w.Kind == waitfor.KindCond {
				k++
			}
		}
		return k >= n
	}), "%d goroutines wait in a Cond", n)
}
