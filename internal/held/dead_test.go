package held_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
)

// holder is what a program's lock is to its identity: the lock points to
// it.
type holder struct{ id *class.Lock }

// A lock left held by an exited goroutine is listed while something
// besides the exited stack reaches it, and dropped, for good, once
// nothing does.
func TestReachableDeadHolds(t *testing.T) {
	const gid = 1 << 40 // no goroutine of this test
	g := held.New(gid, false)
	kept := &holder{class.New(nil, kind.Mutex, 1)}
	hold(g, kept.id)
	hold(g, class.New(nil, kind.Mutex, 2)) // reachable from g's stack only
	exited := func(id int64) bool { return id == gid }

	dead := held.ReachableDeadHolds([]*held.G{g}, exited)
	require.Len(t, dead, 1, "the unreachable lock is still listed")
	assert.Same(t, kept.id, dead[0].Entry.Lock)
	assert.Equal(t, int64(gid), dead[0].Goroutine)

	again := held.ReachableDeadHolds([]*held.G{g}, exited)
	require.Len(t, again, 1, "the reachable hold was not restored")
	assert.Same(t, kept.id, again[0].Entry.Lock)
	runtime.KeepAlive(kept)

	assert.Empty(t, held.ReachableDeadHolds([]*held.G{g}, func(int64) bool { return false }),
		"a goroutine still running holds nothing dead")
}

// hold pushes a write hold of l on g, held by g's goroutine.
//
//go:noinline
func hold(g *held.G, l *class.Lock) {
	l.SetHolder(g.ID())
	g.Push(held.Entry{Lock: l})
}
