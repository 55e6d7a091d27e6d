package rwlock_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/internal/rwlock"
)

// The differential test: rwlock against sync.RWMutex, driven by the same
// random operation sequences, every observable outcome compared.
//
// Single goroutine: every outcome is deterministic, so the two locks are
// compared directly, operation by operation.
//
// Several goroutines: which operations block is compared, step by step,
// against a model of sync.RWMutex's algorithm (model below), and the model
// is checked against sync.RWMutex itself by the same sequences. A step
// gives one operation to one actor goroutine, then waits until every
// goroutine of the test is parked (quiesce): the lock can then make no
// progress until the next step, whatever the scheduler did, so exactly
// the operations the model says complete have completed, writers are
// queued in the order they came, and TryLock and TryRLock, probed then
// (and undone when they lock), see the state the model is in. Nothing
// depends on timing: a slow machine only makes the test slower. The
// cancellable waits (WriterQueue then LockQueued, RLockOrCancel), which
// sync has not, are compared with the model only, in sequences of their
// own.

// A subject is one lock under test.
type subject struct {
	name              string
	lock, unlock      func()
	rlock, runlock    func()
	tryLock, tryRLock func() bool
	// lockCtx and rlockCtx wait until done is closed; nil for sync.
	lockCtx, rlockCtx func(done <-chan struct{}) bool
}

func syncSubject() subject {
	var rw sync.RWMutex
	return subject{name: "sync", lock: rw.Lock, unlock: rw.Unlock, rlock: rw.RLock, runlock: rw.RUnlock,
		tryLock: rw.TryLock, tryRLock: rw.TryRLock}
}

func rwlockSubject() subject {
	rw := new(rwlock.RWMutex)
	must := func(f func() bool) func() {
		return func() {
			if !f() {
				panic("rwlock: misuse in the differential test")
			}
		}
	}
	return subject{name: "rwlock", lock: rw.Lock, unlock: must(rw.Unlock), rlock: rw.RLock, runlock: must(rw.RUnlock),
		tryLock: rw.TryLock, tryRLock: rw.TryRLock,
		lockCtx: func(done <-chan struct{}) bool { return lockOrCancel(rw, done) }, rlockCtx: rw.RLockOrCancel}
}

// lockOrCancel is the write lock that gives up when done is closed, as
// lockorder's LockContext waits for it: the writers' queue is waited for
// beside its sync.Mutex (internal/ctxwait), and LockQueued gives up the
// wait for readers itself.
func lockOrCancel(rw *rwlock.RWMutex, done <-chan struct{}) bool {
	return (*rwlock.Writer)(rw).LockOrCancel(done)
}

// The operations.
type op int

const (
	opLock op = iota
	opRLock
	opTryLock
	opTryRLock
	opUnlock
	opRUnlock
	opLockCtx
	opRLockCtx
	opCancel
)

var opNames = [...]string{"Lock", "RLock", "TryLock", "TryRLock", "Unlock", "RUnlock", "LockCtx", "RLockCtx", "Cancel"}

func (o op) String() string { return opNames[o] }

// TestDifferentialOneGoroutine compares outcomes of random sequences made
// by one goroutine, which may hold several read locks; a Lock or RLock is
// made only when it cannot block, and the cancellable waits, with done
// already closed, stand for TryLock and TryRLock on sync's side.
func TestDifferentialOneGoroutine(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 2))
		var s sync.RWMutex
		var o rwlock.RWMutex
		readers, writer := 0, false
		var trail []string
		for range 60 {
			var name string
			var got, want, read bool
			switch k := r.IntN(8); {
			case k == 0 && !writer && readers == 0:
				name, got, want = "Lock", true, true
				s.Lock()
				o.Lock()
			case k == 1 && !writer:
				name, got, want, read = "RLock", true, true, true
				s.RLock()
				o.RLock()
			case k == 2:
				name, want, got = "TryLock", s.TryLock(), o.TryLock()
			case k == 3:
				name, want, got, read = "TryRLock", s.TryRLock(), o.TryRLock(), true
			case k == 4 && r.IntN(2) == 0:
				name, want = "LockQueued(closed)", s.TryLock()
				got = (*rwlock.WriterQueue)(&o).TryLock() && o.LockQueued(closed)
			case k == 4:
				name, want = "Writer.LockOrCancel(closed)", s.TryLock()
				got = (*rwlock.Writer)(&o).LockOrCancel(closed)
			case k == 5:
				name, want, got, read = "RLockOrCancel(closed)", s.TryRLock(), o.RLockOrCancel(closed), true
			case k == 6 && writer:
				name, got, want = "Unlock", o.Unlock(), true
				s.Unlock()
				writer = false
			case k == 7 && readers > 0:
				name, got, want = "RUnlock", o.RUnlock(), true
				s.RUnlock()
				readers--
			default:
				continue
			}
			trail = append(trail, fmt.Sprintf("%s=%v", name, want))
			if got != want {
				t.Fatalf("seed %d: %s: rwlock %v, sync %v after %s", seed, name, got, want, strings.Join(trail, " "))
			}
			switch {
			case !got || name == "Unlock" || name == "RUnlock":
			case read:
				readers++
			default:
				writer = true
			}
		}
	}
}
