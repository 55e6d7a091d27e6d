package lockorder_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/syncwatch/syncwatch/lockorder"
)

// The differential test of the waits with a context: lockorder's locks
// against sync's, driven by the same random sequences, every outcome of a
// TryLock, TryRLock and successful Lock compared. The sequences mix in
// LockContext and RLockContext, which sync has not: made with a done
// context they stand for TryLock and TryRLock on sync's side; made behind
// a holder by other goroutines that give up, they must change nothing on
// lockorder's side that sync (where nothing happened) could see. Shared by
// both builds (every mode in rwcontext_modes_test.go, and off_test.go).

// diffLock is a lock under test, either implementation.
type diffLock struct {
	lock, unlock, rlock, runlock func()
	tryLock, tryRLock            func() bool
	lockCtx, rlockCtx            func(context.Context) error // nil for sync
}

func checkContextDifferential(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, rwKind := range []bool{false, true} {
		for seed := range uint64(100) {
			r := rand.New(rand.NewPCG(seed, 6))
			s, o := diffPair(rwKind)
			readers, writer := 0, false
			var trail []string
			for range 60 {
				var name string
				var got, want bool
				switch k := r.IntN(9); {
				case k == 0 && !writer && readers == 0:
					name, got, want = "Lock", true, true
					s.lock()
					o.lock()
				case k == 1 && rwKind && !writer:
					name, got, want = "RLock", true, true
					s.rlock()
					o.rlock()
				case k == 2:
					name, want, got = "TryLock", s.tryLock(), o.tryLock()
				case k == 3 && rwKind:
					name, want, got = "TryRLock", s.tryRLock(), o.tryRLock()
				case k == 4:
					name, want, got = "LockContext(done)", s.tryLock(), o.lockCtx(done) == nil
				case k == 5 && rwKind:
					name, want, got = "RLockContext(done)", s.tryRLock(), o.rlockCtx(done) == nil
				case k == 6 && (writer || readers > 0):
					// Waits behind the holders, given up: on sync, none.
					n, read := 1+r.IntN(3), rwKind && writer && r.IntN(2) == 0
					name, want, got = fmt.Sprintf("%d waits given up", n), true, giveUpBehind(o, n, read)
				case k == 7 && writer:
					name, got, want = "Unlock", true, true
					s.unlock()
					o.unlock()
					writer = false
				case k == 8 && readers > 0:
					name, got, want = "RUnlock", true, true
					s.runlock()
					o.runlock()
					readers--
				default:
					continue
				}
				trail = append(trail, fmt.Sprintf("%s=%v", name, want))
				if got != want {
					t.Fatalf("RWMutex %v, seed %d: %s: lockorder %v, sync %v after %s", rwKind, seed, name, got, want, strings.Join(trail, " "))
				}
				switch {
				case !got || strings.Contains(name, "given up") || strings.Contains(name, "Unlock"):
				case strings.Contains(name, "R"):
					readers++
				default:
					writer = true
				}
			}
			for ; readers > 0; readers-- {
				s.runlock()
				o.runlock()
			}
			if writer {
				s.unlock()
				o.unlock()
			}
			if !o.tryLock() {
				t.Fatalf("RWMutex %v, seed %d: lockorder's lock is not free at the end of %s", rwKind, seed, strings.Join(trail, " "))
			}
		}
	}
}

// giveUpBehind makes n goroutines wait on o, held elsewhere, and give up
// once each of them has had its try; it reports whether all gave up.
func giveUpBehind(o diffLock, n int, read bool) bool {
	ctx, cancel := context.WithCancel(context.Background())
	var gaveUp sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		gaveUp.Go(func() {
			wait := o.lockCtx
			if read {
				wait = o.rlockCtx
			}
			errs <- wait(ctx)
		})
	}
	cancel()
	gaveUp.Wait()
	close(errs)
	ok := true
	for err := range errs {
		if err == nil {
			ok = false // it got a lock held elsewhere: undo it to go on
			if read {
				o.runlock()
			} else {
				o.unlock()
			}
		}
	}
	return ok
}

func diffPair(rwKind bool) (s, o diffLock) {
	if !rwKind {
		var sm sync.Mutex
		om := new(lockorder.Mutex)
		return diffLock{lock: sm.Lock, unlock: sm.Unlock, tryLock: sm.TryLock},
			diffLock{lock: om.Lock, unlock: om.Unlock, tryLock: om.TryLock, lockCtx: om.LockContext}
	}
	var srw sync.RWMutex
	orw := new(lockorder.RWMutex)
	return diffLock{lock: srw.Lock, unlock: srw.Unlock, rlock: srw.RLock, runlock: srw.RUnlock, tryLock: srw.TryLock, tryRLock: srw.TryRLock},
		diffLock{lock: orw.Lock, unlock: orw.Unlock, rlock: orw.RLock, runlock: orw.RUnlock, tryLock: orw.TryLock, tryRLock: orw.TryRLock,
			lockCtx: orw.LockContext, rlockCtx: orw.RLockContext}
}
