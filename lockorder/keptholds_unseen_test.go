//go:build !syncwatch_off

package lockorder_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Rule R24 where the engine does not see a kept hold's release, and
// what its records keep. Found by review.

// The exit check takes g out (gateTaken); g's kept hold is then released
// where no hand-off is seen (ModeTrace: no unlockOther), and the graph is
// forgotten (Reset). Back in check mode a new goroutine takes both orders
// under g and keeps g until it exits: R24's own shape, reported, since the
// new holder's acquisition showed the old hold released (Gate.Untake).
func TestAGateTakenOutThenReleasedUnseenIsTakenOutAgain(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24r3m-a"), lockorder.NewMutex("r24r3m-b")
	keepUntilExit(t, g, t.Name(), func() {}) // P keeps g: Gate.Take
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	g.Unlock() // released outside check mode: no hand-off seen
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	lockorder.Reset() // a new test of the binary: graph and records forgotten
	keepUntilExit(t, g, t.Name(), func() {
		lockAB(a, b)
		lockAB(b, a)
	})
	assert.Len(t, only(lockorder.KindCycle), 1,
		"nobody but the keeper ever took g in check mode: g gates nothing (R24), as for a fresh lock")
	runtime.KeepAlive(g)
}

// g's kept hold is handed off while the mode is ModeTrace (no
// unlockOther: no hand-off seen). Back in check mode, Q's acquisition of
// g shows the old hold released, and puts g back into a -> b, P's
// sighting under it, before Q takes b -> a under g: both orders held g.
func TestAKeptGateReleasedOutsideCheckModeIsAGateAgainOnceShown(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24r3t-a"), lockorder.NewMutex("r24r3t-b")
	keepUntilExit(t, g, t.Name(), func() { lockAB(a, b) })
	require.Empty(t, only(lockorder.KindCycle))
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	g.Unlock() // the hand-off, unseen
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	run(func() { g.Lock(); lockAB(b, a); g.Unlock() }) // Q: shows g to gate
	assert.Empty(t, only(lockorder.KindCycle), "both orders held g, and g's release by Q shows it to gate")
	runtime.KeepAlive(g)
}

// A record (eng.ungated) keeps the edges R24 took its lock out of while
// the kept lock lives, but not those that left the graph (their locks
// collected, their nodes removed): Regate would refuse them, and they
// would be dead weight, up to 1024 x 1024 edges (pruneUngated).
func TestARecordDropsEdgesThatLeftTheGraph(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	keepUntilExit(t, g, t.Name(), func() {
		for range 8 {
			a, b := new(lockorder.Mutex), new(lockorder.Mutex) // unnamed: their nodes go with them
			lockAB(a, b)
		}
	})
	require.Equal(t, 1, lockorder.UngatedRecords(), "the check recorded g, to put back")
	// A lock's node may go (its cleanup) between an exit check and the
	// look after it: an edge gone then is pruned at the next check. Once
	// every lock is collected, the record must be empty after a check.
	gone, now := 0, 0
	if pollBusy(func() bool {
		runtime.GC()
		lockorder.ReportBlockedExcept(0, false, nil) // an exit check: pruneUngated
		gone, now = lockorder.UngatedEdgesGone()
		return now == 0
	}) {
		require.Equal(t, 1, lockorder.UngatedRecords(), "the record stays while g lives")
		runtime.KeepAlive(g)
		return // the edges of the collected locks left the record with the graph
	}
	require.Zero(t, gone, "a record keeps %d edges that left the graph", gone)
	t.Fatal("the edges never left the graph: the test proves nothing")
}

// A hand-off shows a lock to gate only if an order edge was ever seen
// under a write hold of it (MarkUnder), as a release by its taker shows
// it only if it proves edges: a Mutex used once as a signal (locked here,
// unlocked by the goroutine that finishes, nothing under it) shows
// nothing, and R24's own shape under it later is reported.
func TestAHandOffWithNothingUnderItShowsNoGate(t *testing.T) {
	fresh(t)
	g := lockorder.NewMutex(t.Name())
	a, b := lockorder.NewMutex("r24r3s-a"), lockorder.NewMutex("r24r3s-b")
	g.Lock()
	run(func() { g.Unlock() }) // a signal: nothing was ever taken under g
	keepUntilExit(t, g, t.Name(), func() {
		lockAB(a, b)
		lockAB(b, a)
	})
	assert.Len(t, only(lockorder.KindCycle), 1, "no hold of g ever had anything under it but the kept one")
	runtime.KeepAlive(g)
}
