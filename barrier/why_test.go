package barrier_test

import (
	"context"
	"fmt"
	"sync"
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

// The incident's shape with real lockorder mutexes: rank 3 takes
// aggregation_lock and waits at the barrier; rank 17 blocks on the lock;
// the other ranks wait. The break says so in one sentence, rank 3's wait
// is reported as a lock held at a barrier, and rank 17, once the lock is
// free, gets the broken generation's error at once.
func TestWhyIncidentRankBlockedOnLockHeldAtBarrier(t *testing.T) {
	requireCheckMode(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	const parties = 32
	agg := lockorder.NewMutex("aggregation_lock")
	b := barrier.New(parties, barrier.WithName("allreduce"), barrier.WithTimeout(time.Second))

	type rank3Info struct {
		gid  int64
		lock string
	}
	var (
		locked   = make(chan rank3Info, 1)
		lockInfo = make(chan rank3Info, 1)
		gid17    = make(chan int64, 1)
		res      = make([]result, parties)
		late17   result
		wg       sync.WaitGroup
	)
	for r := range parties {
		wg.Go(func() {
			// Generation 0 completes: the barrier learns every rank's goroutine.
			_, err := b.Await(context.Background(), r)
			if !assert.NoError(t, err) {
				return
			}
			switch r {
			case 3:
				agg.Lock()
				held := lockorder.HeldLocks()
				if assert.Len(t, held, 1) {
					info := rank3Info{gid: goid.ID(), lock: held[0].Name}
					locked <- info
					lockInfo <- info
				}
				g, err := b.Await(context.Background(), 3)
				res[r] = result{gen: g, err: err}
				agg.Unlock()
			case 17:
				<-locked
				gid17 <- goid.ID()
				agg.Lock() // blocks until rank 3 is released by the break
				agg.Unlock()
				g, err := b.Await(context.Background(), 17)
				late17 = result{gen: g, err: err}
			default:
				g, err := b.Await(context.Background(), r)
				res[r] = result{gen: g, err: err}
			}
		})
	}
	waitGroup(t, &wg, 20*time.Second)

	info := <-lockInfo
	var be *barrier.BrokenError
	require.ErrorAs(t, res[0].err, &be)
	for r := range parties {
		if r != 17 {
			assert.Same(t, be, res[r].err, "rank %d", r)
			assert.EqualValues(t, 1, res[r].gen, "rank %d", r)
		}
	}
	require.Equal(t, []int{17}, be.Missing)
	require.Len(t, be.Why, 1)
	t.Log(be.Report())
	sentence := fmt.Sprintf("waiting for lock %s, held by goroutine %d (rank 3), which is waiting at this barrier", info.lock, info.gid)
	assert.Equal(t, barrier.MissingRank{
		Rank:       17,
		Goroutine:  <-gid17,
		WaitingFor: "lock " + info.lock,
		Holder:     info.gid,
		HolderRank: 3,
		Reason:     sentence,
	}, be.Why[0])
	assert.Contains(t, be.Error(), "rank 17: "+sentence)

	// Rank 17, freed, arrives late for generation 1 and gets its error at once.
	assert.EqualValues(t, 1, late17.gen)
	assert.Same(t, be, late17.err)

	held := violations(barrier.KindLockHeld)
	require.Len(t, held, 1, "rank 3 waited at the barrier holding aggregation_lock")
	assert.Equal(t, "waiting at barrier allreduce while holding "+info.lock, held[0].Message)
	assert.Equal(t, info.gid, held[0].Goroutine)
	assert.Equal(t, "aggregation_lock", held[0].Locks[0].Class)
	assert.False(t, held[0].Expected)
	require.NotEmpty(t, held[0].Stack)
	assert.Contains(t, held[0].Stack[0].Function, "barrier_test.", "the stack starts at the caller of Await")
	assert.Contains(t, held[0].Detail, "rank 3")

	broken := violations(barrier.KindBroken)
	require.Len(t, broken, 1)
	assert.Contains(t, broken[0].Detail, "rank 17: "+sentence)
}

// An ABBA deadlock between two ranks, bounded by LockContext: each missing
// rank's explanation follows the holders around the cycle.
func TestWhyFollowsLockCycle(t *testing.T) {
	requireCheckMode(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	workerLock, aggLock := lockorder.NewMutex("worker_lock"), lockorder.NewMutex("aggregation_lock")
	b := barrier.New(4, barrier.WithTimeout(200*time.Millisecond))
	lockCtx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()

	type holding struct {
		gid  int64
		lock string
	}
	var (
		holds [4]holding
		ready sync.WaitGroup
		res   [4]result
		wg    sync.WaitGroup
	)
	ready.Add(2)
	deadlock := func(rank int, first, second *lockorder.Mutex) {
		first.Lock()
		holds[rank] = holding{goid.ID(), lockorder.HeldLocks()[0].Name}
		ready.Done()
		ready.Wait()
		if second.LockContext(lockCtx) == nil {
			second.Unlock()
		}
		first.Unlock()
	}
	for r := range 4 {
		wg.Go(func() {
			if _, err := b.Await(context.Background(), r); !assert.NoError(t, err) {
				return
			}
			switch r {
			case 1:
				deadlock(1, workerLock, aggLock)
			case 2:
				deadlock(2, aggLock, workerLock)
			}
			g, err := b.Await(context.Background(), r) // late for 1 and 2
			res[r] = result{gen: g, err: err}
		})
	}
	waitGroup(t, &wg, 10*time.Second)

	var be *barrier.BrokenError
	require.ErrorAs(t, res[0].err, &be)
	for r := range 4 {
		assert.Same(t, be, res[r].err, "rank %d", r)
	}
	require.Equal(t, []int{1, 2}, be.Missing)
	require.Len(t, be.Why, 2)
	t.Log(be)
	w, a := holds[1], holds[2]
	assert.Equal(t, fmt.Sprintf("waiting for lock %s, held by goroutine %d (rank 2), which is waiting for lock %s, "+
		"held by goroutine %d (rank 1), which closes a cycle of waits: deadlock", a.lock, a.gid, w.lock, w.gid), be.Why[0].Reason)
	assert.Equal(t, fmt.Sprintf("waiting for lock %s, held by goroutine %d (rank 1), which is waiting for lock %s, "+
		"held by goroutine %d (rank 2), which closes a cycle of waits: deadlock", w.lock, w.gid, a.lock, a.gid), be.Why[1].Reason)
	assert.Equal(t, 2, be.Why[0].HolderRank)
	assert.Equal(t, 1, be.Why[1].HolderRank)
}

// A rank whose goroutine is blocked outside syncwatch is said to be so.
func TestWhyRankNotWaitingInSyncwatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(2, barrier.WithTimeout(150*time.Millisecond))
	release := make(chan struct{})
	var (
		wg    sync.WaitGroup
		gid1  int64
		late1 result
	)
	wg.Go(func() {
		gid1 = goid.ID()
		if _, err := b.Await(context.Background(), 1); !assert.NoError(t, err) {
			return
		}
		<-release // busy elsewhere: a channel, not a syncwatch wait
		g, err := b.Await(context.Background(), 1)
		late1 = result{gen: g, err: err}
	})
	_, err := b.Await(context.Background(), 0)
	require.NoError(t, err)
	_, err = b.Await(context.Background(), 0)
	close(release)
	waitGroup(t, &wg, 5*time.Second)

	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Why, 1)
	assert.Equal(t, barrier.MissingRank{
		Rank: 1, Goroutine: gid1, HolderRank: -1,
		Reason: "not waiting in syncwatch (running, or blocked elsewhere)",
	}, be.Why[0])
	assert.Same(t, be, late1.err)
}

// A rank whose goroutine waits at another barrier is said to be there.
func TestWhyRankWaitingAtAnotherBarrier(t *testing.T) {
	defer goleak.VerifyNone(t)
	train := barrier.New(2, barrier.WithName("train"), barrier.WithTimeout(150*time.Millisecond))
	eval := barrier.New(2, barrier.WithName("eval"))
	var (
		wg   sync.WaitGroup
		errE error
	)
	wg.Go(func() {
		if _, err := train.Await(context.Background(), 1); !assert.NoError(t, err) {
			return
		}
		_, errE = eval.Await(context.Background(), 0) // eval's rank 1 never comes
		train.Await(context.Background(), 1)
	})
	_, err := train.Await(context.Background(), 0)
	require.NoError(t, err)
	_, err = train.Await(context.Background(), 0)
	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)
	eval.Abort(nil)
	waitGroup(t, &wg, 5*time.Second)
	assert.ErrorIs(t, errE, barrier.ErrAborted)
	require.Len(t, be.Why, 1)
	assert.Equal(t, "waiting at barrier eval (rank 0, generation 0)", be.Why[0].Reason)
	assert.Equal(t, "barrier eval (rank 0, generation 0)", be.Why[0].WaitingFor)
}

// Semantics 6: waiting while holding a lockorder lock is reported, and the
// wait proceeds.
func TestLockHeldAtBarrierIsReported(t *testing.T) {
	requireCheckMode(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	mu := lockorder.NewMutex("held_lock")
	b := barrier.New(2, barrier.WithName("step"))
	var wg sync.WaitGroup
	var err1 error
	wg.Go(func() { _, err1 = b.Await(context.Background(), 1) })
	mu.Lock()
	name := lockorder.HeldLocks()[0].Name
	_, err := b.Await(context.Background(), 0)
	mu.Unlock()
	waitGroup(t, &wg, 5*time.Second)
	require.NoError(t, err, "the wait proceeds")
	require.NoError(t, err1)

	vs := violations(barrier.KindLockHeld)
	require.Len(t, vs, 1)
	assert.Equal(t, "barrier", vs[0].Source)
	assert.Equal(t, "waiting at barrier step while holding "+name, vs[0].Message)
	assert.Equal(t, goid.ID(), vs[0].Goroutine)
	assert.Equal(t, []lockorder.LockRef{{Name: name, Class: "held_lock", ID: vs[0].Locks[0].ID}}, vs[0].Locks)
	require.NotEmpty(t, vs[0].Stack)
	assert.Contains(t, vs[0].Stack[0].Function, "TestLockHeldAtBarrierIsReported")

	// Without a lock held, nothing is reported.
	res := awaitAll(t, b, []int{0, 1}, 5*time.Second)
	require.NoError(t, res[0].err)
	assert.Len(t, violations(barrier.KindLockHeld), 1)
}

// In ModeTrace (production) lock waits are registered too, without a
// holder: the break still names the lock a missing rank is blocked on.
func TestWhyInTraceModeNamesTheLock(t *testing.T) {
	requireCheckMode(t)
	defer goleak.VerifyNone(t)
	resetViolations(t)
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	defer lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
	agg := lockorder.NewMutex("aggregation_lock")
	b := barrier.New(2, barrier.WithName("step"), barrier.WithTimeout(time.Second))
	locked := make(chan struct{})
	done := make(chan struct{})
	go func() { // rank 1
		defer close(done)
		_, err := b.Await(context.Background(), 1) // generation 0: both arrive
		assert.NoError(t, err)
		<-locked
		agg.Lock() // rank 1 never arrives at generation 1: it waits for the lock
		agg.Unlock()
	}()
	_, err := b.Await(context.Background(), 0)
	require.NoError(t, err)
	agg.Lock()
	close(locked)
	_, err = b.Await(context.Background(), 0)
	agg.Unlock()
	<-done
	var be *barrier.BrokenError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Why, 1)
	assert.Equal(t, 1, be.Why[0].Rank)
	assert.Regexp(t, `^lock aggregation_lock#\d+$`, be.Why[0].WaitingFor)
	assert.Regexp(t, `^waiting for lock aggregation_lock#\d+, holder not tracked in this mode$`, be.Why[0].Reason)
}

// A rank waiting at the barrier needs the missing ranks: the wait-for graph
// names their goroutines, so an explanation of the wait can follow them.
func TestWaitNamesTheMissingRanksGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := barrier.New(2, barrier.WithTimeout(5*time.Second))
	ranks := make(chan int64, 1)
	done := make(chan struct{})
	release := make(chan struct{})
	go func() { // rank 1: arrives once, then is busy elsewhere
		defer close(done)
		ranks <- goid.ID()
		_, err := b.Await(context.Background(), 1)
		assert.NoError(t, err)
		<-release
		_, err = b.Await(context.Background(), 1)
		assert.NoError(t, err)
	}()
	rank1 := <-ranks
	_, err := b.Await(context.Background(), 0)
	require.NoError(t, err)
	waiting := make(chan struct{})
	go func() {
		defer close(waiting)
		_, err := b.Await(context.Background(), 0) // waits for rank 1
		assert.NoError(t, err)
	}()
	var blockers []int64
	require.Eventually(t, func() bool {
		for _, w := range waitfor.All() {
			if w.Kind == waitfor.KindBarrier && w.ObjectID != 0 && w.Blockers != nil {
				blockers = w.Blockers(nil)
				return len(blockers) > 0
			}
		}
		return false
	}, 5*time.Second, time.Millisecond)
	assert.Equal(t, []int64{rank1}, blockers)
	close(release)
	<-waiting
	<-done
}
