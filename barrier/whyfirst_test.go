package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder"
)

// waitBlocked waits until goroutine gid is blocked, as the runtime shows it
// (in every mode: ModeOff registers no lock wait).
func waitBlocked(t *testing.T, gid int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		r, ok := waitfor.Fresh().Routine(gid)
		return ok && waitfor.StateBlocked(r.State)
	}, 20*time.Second, time.Millisecond)
}

// firstGeneration runs generation 0 of a barrier of two ranks in mode:
// rank 0 arrives holding lock agg; a goroutine that never called Await,
// rank 1's perhaps, blocks on agg (or, if heldHere is false, on a lock
// the test holds outside the barrier). Once both wait, the barrier is
// aborted; it returns the break and the blocked goroutine's id and the
// lock's name.
func firstGeneration(t *testing.T, mode lockorder.Mode, heldHere bool) (be *barrier.BrokenError, status barrier.Status, blocked int64, lock string) {
	t.Helper()
	lockorder.Configure(lockorder.WithMode(mode))
	defer lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	agg := lockorder.NewMutex("agg")
	b := barrier.New(2, barrier.WithName("step"))

	names := make(chan string, 1)
	heldName := func() string { // the lock's name, known in ModeCheck
		if held := lockorder.HeldLocks(); len(held) > 0 {
			return held[0].Name
		}
		return ""
	}
	rank0 := make(chan error, 1)
	if heldHere {
		go func() {
			agg.Lock()
			names <- heldName()
			_, err := b.Await(context.Background(), 0)
			agg.Unlock()
			rank0 <- err
		}()
		waitArrived(t, b, 0, 0)
	} else {
		agg.Lock()
		names <- heldName()
		go func() {
			_, err := b.Await(context.Background(), 0)
			rank0 <- err
		}()
		waitArrived(t, b, 0, 0)
	}
	lock = <-names

	gids := make(chan int64, 1)
	late := make(chan error, 1)
	go func() { // blocked on agg; rank 1 once it gets it, late
		gids <- goid.ID()
		agg.Lock()
		agg.Unlock()
		_, err := b.Await(context.Background(), 1)
		late <- err
	}()
	blocked = <-gids
	waitBlocked(t, blocked)

	status = b.Status()
	b.Abort(errors.New("test"))
	err := <-rank0
	if !heldHere {
		agg.Unlock()
	}
	require.ErrorAs(t, err, &be)
	assert.Same(t, be, <-late, "the blocked goroutine, freed, arrives late and gets the break")
	return be, status, blocked, lock
}

// Generation 0: rank 1 never called Await, and a goroutine is blocked on
// a lock held by rank 0, which waits at the barrier. The break says so,
// naming the goroutine, the lock and the rank holding it, without
// claiming the goroutine is rank 1's; Status says the same while it waits.
func TestWhyFirstGenerationBlockedOnLockHeldHere(t *testing.T) {
	requireCheckMode(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	be, status, blocked, lock := firstGeneration(t, lockorder.ModeCheck, true)
	t.Log(be)
	require.Equal(t, []int{1}, be.Missing)
	require.Len(t, be.Why, 1)
	m := be.Why[0]
	assert.Equal(t, 1, m.Rank)
	assert.Zero(t, m.Goroutine, "rank 1's goroutine is not known")
	assert.Equal(t, -1, m.HolderRank)
	assert.Regexp(t, fmt.Sprintf(`^never arrived at this barrier; goroutine %d, of no known rank, is blocked on lock %s, `+
		`held by goroutine \d+ \(rank 0\), which is waiting at this barrier$`, blocked, lock), m.Reason)
	assert.Contains(t, be.Error(), "rank 1: "+m.Reason)
	require.Len(t, status.Missing, 1)
	assert.Equal(t, m.Reason, status.Missing[0].Reason)
	require.Len(t, violations(barrier.KindLockHeld), 1, "rank 0 waited holding agg")
}

// Generation 0: rank 1 simply never comes. A goroutine blocked on a lock
// held outside the barrier is not this barrier's business: rank 1 never
// arrived, and nothing more is said.
func TestWhyFirstGenerationNeverArrived(t *testing.T) {
	requireCheckMode(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	be, status, _, _ := firstGeneration(t, lockorder.ModeCheck, false)
	require.Len(t, be.Why, 1)
	assert.Equal(t, barrier.MissingRank{Rank: 1, HolderRank: -1, Reason: "never arrived at this barrier"}, be.Why[0])
	assert.Contains(t, be.Error(), "; rank 1: never arrived at this barrier")
	assert.Equal(t, be.Why, status.Missing)
}

// Holders are known in ModeCheck only: in ModeTrace the lock wait has no
// holder, and in ModeOff no lock wait is registered, so a rank that never
// called Await is only said to have never arrived, as the doc states.
func TestWhyFirstGenerationWithoutHolders(t *testing.T) {
	requireCheckMode(t)
	for _, mode := range []lockorder.Mode{lockorder.ModeTrace, lockorder.ModeOff} {
		t.Run(mode.String(), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			resetViolations(t)
			for _, heldHere := range []bool{true, false} {
				be, _, _, _ := firstGeneration(t, mode, heldHere)
				require.Len(t, be.Why, 1)
				assert.Equal(t, barrier.MissingRank{Rank: 1, HolderRank: -1, Reason: "never arrived at this barrier"}, be.Why[0])
			}
		})
	}
}
