//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// client is the shape of a connection set up lazily: its Once's function
// takes the connection's lock, and its methods, which call setup first,
// call it again later while holding that lock.
type client struct {
	mu    lockorder.Mutex
	once  lockorder.Once
	ready bool
}

func (c *client) setup() {
	c.once.Do(func() {
		c.mu.Lock()
		c.ready = true
		c.mu.Unlock()
	})
}

func (c *client) send() {
	c.setup()
	c.mu.Lock()
	c.setup() // the Once is done, and this goroutine saw it done: cannot wait
	c.mu.Unlock()
}

// A Do on a Once that the calling goroutine saw done before cannot wait:
// it is no order edge into the Once, and no cycle with the lock the
// Once's function takes.
func TestDoOnADoneOnceSeenDoneIsNoEdge(t *testing.T) {
	fresh(t)
	c := &client{}
	run(c.send)
	run(c.send)
	assert.Empty(t, only(lockorder.KindCycle))
}

// A lock taken inside the Once's function and held since: the goroutine
// ran the function, so its later Do cannot wait.
func TestDoUnderALockTakenInsideTheOnceIsNoEdge(t *testing.T) {
	fresh(t)
	var (
		mu   lockorder.Mutex
		once lockorder.Once
	)
	run(func() {
		once.Do(func() { mu.Lock() }) // held past the function
		once.Do(func() {})
		mu.Unlock()
	})
	assert.Empty(t, only(lockorder.KindCycle))
}

// A goroutine that never saw the Once done calls Do holding the lock the
// Once's function takes: made a little earlier, while another goroutine
// ran the function, that Do waits for it, and the function waits for the
// lock. That cycle is still reported.
func TestFirstDoOnADoneOnceUnderItsLockIsACycle(t *testing.T) {
	fresh(t)
	c := &client{}
	run(c.setup) // another goroutine completes the Once
	run(func() {
		c.mu.Lock()
		c.setup() // its first Do, holding mu
		c.mu.Unlock()
	})
	assert.Len(t, only(lockorder.KindCycle), 1)
}
