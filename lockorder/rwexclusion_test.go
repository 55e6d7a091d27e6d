//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// registry is the shape of a connection multiplexer: a registry lock
// over the table of sessions. Closing the multiplexer takes the registry
// for writing, then each session's lock and the shared stats lock under
// it; a stream handler takes the registry for reading, then the stats
// lock, then its session's lock. The two orders of session and stats
// can never run at once: the writer holds the registry exclusively.
type registry struct {
	table         *lockorder.RWMutex
	session, stat *lockorder.Mutex
}

func newRegistry(name string) *registry {
	return &registry{
		table:   lockorder.NewRWMutex(name + "-table"),
		session: lockorder.NewMutex(name + "-session"),
		stat:    lockorder.NewMutex(name + "-stats"),
	}
}

// closeAll takes the table for writing, then session, then stats.
func (r *registry) closeAll() {
	r.table.Lock()
	lockAB(r.session, r.stat)
	r.table.Unlock()
}

// handle takes the table for reading, then stats, then session.
func (r *registry) handle() {
	r.table.RLock()
	lockAB(r.stat, r.session)
	r.table.RUnlock()
}

// handleUnlocked takes stats, then session, without the table.
func (r *registry) handleUnlocked() { lockAB(r.stat, r.session) }

// Two edges under one RWMutex, one side holding it for writing and the
// other for reading, cannot wait at once (rule R-RW): not reported,
// whichever order is seen first.
func TestRWExclusionHoldsBackCycle(t *testing.T) {
	fresh(t)
	r := newRegistry("rwx")
	run(r.closeAll)
	run(r.handle)
	run(r.handle)
	assert.Empty(t, lockorder.Violations(), "closeAll holds the table for writing, handle for reading")

	fresh(t)
	r = newRegistry("rwx2")
	run(r.handle)
	run(r.closeAll)
	assert.Empty(t, lockorder.Violations(), "the other order first")
}

// The real deadlock beside it: a handler that takes stats and session
// without the table can run while closeAll waits, and is reported.
func TestRWExclusionNeedsTheHoldOnBothSides(t *testing.T) {
	fresh(t)
	r := newRegistry("rwx3")
	run(r.closeAll)
	run(r.handle)
	require.Empty(t, lockorder.Violations())
	run(r.handleUnlocked)
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Len(t, vs[0].Cycle, 2)
}

// A read hold on both sides excludes nothing: two handlers, one taking
// session then stats, the other stats then session, both under the
// table's read lock, deadlock once a writer queues (or not at all: the
// locks they invert are Mutexes). Reported.
func TestRWExclusionReadOnBothSidesReported(t *testing.T) {
	fresh(t)
	r := newRegistry("rwx4")
	run(r.handle)
	run(func() {
		r.table.RLock()
		lockAB(r.session, r.stat)
		r.table.RUnlock()
	})
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Len(t, vs[0].Cycle, 2)
}

// A read hold handed to another goroutine may end while its taker
// waits: the handler begins its read of the table and hands it to a
// finisher, which ends it. Once a read hold of the table is released by
// a goroutine that did not take it, its read holds exclude nothing, and
// the cycle they held back is reported then.
func TestRWExclusionHandedOverReadHoldReported(t *testing.T) {
	fresh(t)
	r := newRegistry("rwx5")
	run(r.closeAll)
	run(func() {
		r.table.RLock()
		lockAB(r.stat, r.session)
	})
	require.Empty(t, lockorder.Violations(), "the read hold may still be the handler's")
	run(r.table.RUnlock) // the finisher ends the handler's read
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "held back on a read hold that was handed over")
	assert.Len(t, vs[0].Cycle, 2)

	// Once handed over, the table's read holds never count again.
	fresh(t)
	r2 := &registry{table: r.table, session: lockorder.NewMutex("rwx6-session"), stat: lockorder.NewMutex("rwx6-stats")}
	run(r2.closeAll)
	run(r2.handle)
	assert.Len(t, only(lockorder.KindCycle), 1)
}
