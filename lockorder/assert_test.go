//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

type server struct {
	mu      lockorder.Mutex
	version int
}

//go:noinline
func (s *server) bump() {
	s.mu.AssertHeld()
	s.version++
}

func TestAssertHeld(t *testing.T) {
	fresh(t)
	var s server
	s.mu.Lock()
	s.bump()
	s.mu.Unlock()
	assert.Empty(t, lockorder.Violations())

	s.bump() // the incident's unlocked parameter-server update
	vs := only(lockorder.KindNotHeld)
	require.Len(t, vs, 1)
	require.Len(t, vs[0].Locks, 1)
	assert.Equal(t, nameOf(t, &s.mu), vs[0].Locks[0].Name, "the report names s.mu")
	require.NotEmpty(t, vs[0].Stack)
	assert.Contains(t, vs[0].Stack[0].Function, "(*server).bump")

	// Held by another goroutine is not held by us.
	s.mu.Lock()
	run(func() { s.mu.AssertHeld() })
	s.mu.Unlock()
	assert.Len(t, only(lockorder.KindNotHeld), 2)
}

func TestAssertRHeld(t *testing.T) {
	fresh(t)
	var m lockorder.RWMutex
	m.RLock()
	m.AssertRHeld()
	m.RUnlock()
	m.Lock()
	m.AssertRHeld() // a write hold counts
	m.AssertHeld()
	m.Unlock()
	require.Empty(t, lockorder.Violations())

	m.RLock()
	m.AssertHeld() // a read hold is not a write hold
	m.RUnlock()
	m.AssertRHeld()
	vs := only(lockorder.KindNotHeld)
	require.Len(t, vs, 2)
	assert.Contains(t, vs[0].Message, "AssertHeld")
	assert.Contains(t, vs[1].Message, "AssertRHeld")
}

func TestAssertHeldFreeOutsideCheckMode(t *testing.T) {
	fresh(t)
	lockorder.Configure(lockorder.WithMode(lockorder.ModeOff))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck)) })
	var m lockorder.Mutex
	m.AssertHeld()
	assert.Zero(t, testing.AllocsPerRun(100, m.AssertHeld))
	assert.Empty(t, lockorder.Violations())
}

func TestHeldLocks(t *testing.T) {
	fresh(t)
	a, b := lockorder.NewMutex("heldA"), lockorder.NewRWMutex("heldB")
	assert.Empty(t, lockorder.HeldLocks())
	a.Lock()
	b.RLock()
	got := lockorder.HeldLocks()
	b.RUnlock()
	a.Unlock()
	require.Len(t, got, 2)
	assert.Equal(t, "heldA", got[0].Class)
	assert.Equal(t, "heldB", got[1].Class)
	assert.Empty(t, lockorder.HeldLocks())
}
