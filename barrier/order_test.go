package barrier_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

// Rule R21 of docs/RULES.md: what each rank did before it arrived happens
// before what each does once the generation completed, so lock orders a
// generation keeps apart are no cycle; orders taken in one generation
// still are.

func lockAB(a, b *lockorder.Mutex) {
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
}

// twoPhases runs ranks 0 and 1 on a barrier of two: rank 0 runs first,
// then arrives; rank 1 arrives, then runs second. It returns once both
// have.
func twoPhases(t *testing.T, first, second func()) {
	t.Helper()
	b := barrier.New(2, barrier.WithName("r21-phases"))
	errs := make(chan error, 2)
	go func() {
		first()
		_, err := b.Await(context.Background(), 0)
		errs <- err
	}()
	go func() {
		_, err := b.Await(context.Background(), 1)
		if err == nil {
			second()
		}
		errs <- err
	}()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
}

func TestGenerationOrdersLockOrders(t *testing.T) {
	requireCheckMode(t)
	resetViolations(t)
	a, b := lockorder.NewMutex("r21-bar-a"), lockorder.NewMutex("r21-bar-b")
	twoPhases(t, func() { lockAB(a, b) }, func() { lockAB(b, a) })
	assert.Empty(t, violations(lockorder.KindCycle))
}

// Rank 1 takes b then a before it arrives, after rank 0 took a then b
// (through a channel syncwatch does not see): in another run the two
// overlap. That is a cycle.
func TestOrdersBeforeOneGenerationAreACycle(t *testing.T) {
	requireCheckMode(t)
	resetViolations(t)
	a, b := lockorder.NewMutex("r21-bar-a2"), lockorder.NewMutex("r21-bar-b2")
	bar := barrier.New(2, barrier.WithName("r21-same"))
	errs := make(chan error, 2)
	took := make(chan struct{})
	go func() {
		lockAB(a, b)
		close(took)
		_, err := bar.Await(context.Background(), 0)
		errs <- err
	}()
	go func() {
		<-took
		lockAB(b, a)
		_, err := bar.Await(context.Background(), 1)
		errs <- err
	}()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	assert.Len(t, violations(lockorder.KindCycle), 1)
}
