//go:build !syncwatch_off

package lockorder_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/lockorder"
)

// review3: G1 holds A and C and blocks on B; its hold of A is then handed
// off (another goroutine unlocks A) before the monitor proves the real
// deadlock G1/G2 on B and C. The edge A->B copied onto G1's wait at block
// time no longer stands at the proof (A's Moves changed), and R23 says a
// handed-off hold orders nothing: provedByDeadlock must not add it. Only
// the true cycle B<->C may be reported.
func TestDeadlockProofAddsEdgeOfAHoldHandedOffMeanwhile(t *testing.T) {
	reportDeadlocks(t)
	a, b, c := lockorder.NewMutex("r3h-A"), lockorder.NewMutex("r3h-B"), lockorder.NewMutex("r3h-C")
	run(func() { lockAB(b, a) }) // B->A, proved: its goroutine unlocked A itself
	g1held, g2held := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { review3G1(a, b, c, g1held, g2held) })
	wg.Go(func() {
		b.Lock()
		close(g2held)
		<-g1held
		c.Lock() // blocks: G1 holds C
		c.Unlock()
		b.Unlock()
	})
	<-g1held
	<-g2held
	untilBlocked(t, "review3G1") // G1 is waiting for B, its wait registered
	a.Unlock()                   // A handed off: G1's edge A->B orders nothing
	d := awaitKind(t, lockorder.KindDeadlock, time.Minute)
	cycles := only(lockorder.KindCycle)
	c.Unlock() // break the deadlock
	wg.Wait()
	require.NotEmpty(t, cycles, "the true cycle B<->C")
	for _, v := range cycles {
		assert.Less(t, v.ID, d.ID)
		for _, e := range v.Cycle {
			assert.NotEqual(t, "r3h-A", e.From, "edge from A, a hold handed off before the proof, reported in %s", v.Message)
		}
	}
}

// review3G1 is G1 of TestDeadlockProofAddsEdgeOfAHoldHandedOffMeanwhile,
// named for untilBlocked.
func review3G1(a, b, c *lockorder.Mutex, g1held, g2held chan struct{}) {
	a.Lock()
	c.Lock()
	close(g1held)
	<-g2held
	b.Lock() // blocks: G2 holds B
	b.Unlock()
	// A and C were both unlocked for it by the test goroutine.
}

// A deadlock through a Once (hugo's shape, GoKer hugo/5379): A holds mu and
// waits for the Once whose function B runs, which waits for mu. A's edge
// mu -> once waits for A's own Unlock (R23), which cannot come: the proof
// of the deadlock adds it, and the cycle is reported before the deadlock,
// as for a wait on a lock.
func TestAOnceWaitOfADeadlockProvesItsEdges(t *testing.T) {
	reportDeadlocks(t)
	mu := lockorder.NewMutex("wp6-mu")
	var o lockorder.Once
	var rescued atomic.Bool
	inDo, muHeld := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // B: runs o's function, which needs mu
		o.Do(func() {
			close(inDo)
			<-muHeld
			mu.Lock()
			mu.Unlock()
		})
	})
	wg.Go(func() { // A: holds mu, waits for o
		<-inDo
		mu.Lock()
		close(muHeld)
		o.Do(func() {})
		if !rescued.Load() {
			mu.Unlock()
		}
	})
	d := awaitKind(t, lockorder.KindDeadlock, time.Minute)
	vs := only(lockorder.KindCycle)
	require.Len(t, vs, 1, "proved by the deadlock")
	assert.Less(t, vs[0].ID, d.ID, "reported before the deadlock")
	rescued.Store(true)
	mu.Unlock() // break it: sync lets any goroutine unlock
	wg.Wait()
}
