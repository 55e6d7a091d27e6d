//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// sessionCache is the shape of a session sessionCache: get creates a missing entry
// under the sessionCache lock and initialises it, its lock held, before it
// publishes it in the table; an entry's owner, holding the entry, later
// takes the sessionCache lock to evict it.
type sessionCache struct {
	mu    *lockorder.Mutex
	table map[int]*entry
	class string
}

type entry struct {
	mu *lockorder.Mutex
	n  int
}

func newSessionCache(class string) *sessionCache {
	return &sessionCache{mu: lockorder.NewMutex(class + "-cache"), table: map[int]*entry{}, class: class}
}

// create makes entry k under the sessionCache lock: the entry lock's first
// acquisition, before any other goroutine can know of it.
func (c *sessionCache) create(k int) *entry {
	c.mu.Lock()
	e := &entry{mu: lockorder.NewMutex(c.class + "-entry")}
	e.mu.Lock()
	e.n = k
	e.mu.Unlock()
	c.table[k] = e
	c.mu.Unlock()
	return e
}

// evict takes the entry, then the sessionCache to drop it.
func (c *sessionCache) evict(e *entry) {
	e.mu.Lock()
	c.mu.Lock()
	delete(c.table, e.n)
	c.mu.Unlock()
	e.mu.Unlock()
}

// lookup takes the sessionCache, then an entry that others use.
func (c *sessionCache) lookup(k int) {
	c.mu.Lock()
	if e := c.table[k]; e != nil {
		e.mu.Lock()
		e.mu.Unlock()
	}
	c.mu.Unlock()
}

// A lock's first acquisition, under another lock, cannot wait: no other
// goroutine has acquired it (rule R-FIRST). Creating entries under the
// sessionCache lock is no order sessionCache -> entry, and eviction (entry -> sessionCache)
// forms no cycle with it.
func TestFirstAcquisitionUnderAnotherLockIsNoEdge(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	fresh(t)
	c := newSessionCache("first")
	e1 := c.create(1)
	run(func() { c.evict(e1) })
	e2 := c.create(2)
	run(func() { c.evict(e2) })
	assert.Empty(t, lockorder.Violations(), "creation under the sessionCache lock cannot wait for the entry")
}

// The real deadlock beside it: a lookup takes an entry others use under
// the sessionCache lock, while an eviction holds the entry and waits for the
// sessionCache. Reported.
func TestAcquisitionAfterTheFirstUnderAnotherLockIsAnEdge(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	fresh(t)
	c := newSessionCache("first2")
	e1 := c.create(1)
	run(func() { c.evict(e1) })
	require.Empty(t, lockorder.Violations())
	c.create(2)
	run(func() { c.lookup(2) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)
	assert.Len(t, vs[0].Cycle, 2)
}

// A lock made before the holds it is first taken under may have been
// published: two goroutines locking a then b, and b then a, each lock
// first taken nested, deadlock in another interleaving. Reported.
func TestFirstAcquisitionOfAPublishedLockIsAnEdge(t *testing.T) {
	if !freshInitRule(t) {
		return
	}
	fresh(t)
	a, b := lockorder.NewMutex("first3-a"), lockorder.NewMutex("first3-b")
	run(func() { lockAB(a, b) })
	run(func() { lockAB(b, a) })
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1)

	// Made under a lock but first taken after its release: published.
	fresh(t)
	c := newSessionCache("first4")
	c.mu.Lock()
	e := &entry{mu: lockorder.NewMutex("first4-entry")}
	c.table[1] = e
	c.mu.Unlock()
	run(func() { c.lookup(1) }) // cache -> entry, the entry's first
	run(func() { c.evict(e) })  // entry -> cache
	assert.Len(t, only(lockorder.KindCycle), 1)
}
