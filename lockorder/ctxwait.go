package lockorder

import (
	"context"
	"sync"

	"github.com/syncwatch/syncwatch/internal/ctxwait"
)

// lockWithContext acquires lk, or gives up when ctx is done, and reports
// whether it acquired. A lock that gives up is left as it was: nothing
// holds or takes it on the caller's behalf afterwards.
//
// Every wait here can be given up in place, on the caller's goroutine:
// RWMutex's read side queues at its gate, its write side and Mutex wait
// for a sync.Mutex beside it (internal/ctxwait), never in its own queue.
// The waits are channel receives, which a testing/synctest bubble sees as
// durable, and they start no goroutine.
func lockWithContext(ctx context.Context, lk cancelLocker) bool {
	done := ctx.Done()
	if done == nil {
		lk.Lock()
		return true
	}
	return lk.LockOrCancel(done)
}

// A cancelLocker is a lock whose wait can be given up: LockOrCancel
// acquires it, or gives up when done is closed, leaving it as it was.
type cancelLocker interface {
	Lock()
	LockOrCancel(done <-chan struct{}) bool
}

// A ctxMutex is a Mutex's sync.Mutex as a cancelLocker. Its releases go
// through ctxwait.Unlock: the slow halves of Unlock call it, and while it
// waits a ctxMutex turns the fast paths off (ctxWaitBegin), so that the
// releases it waits for take the slow halves.
type ctxMutex sync.Mutex

func (c *ctxMutex) Lock() { (*sync.Mutex)(c).Lock() }

func (c *ctxMutex) LockOrCancel(done <-chan struct{}) bool {
	m := (*sync.Mutex)(c)
	ctxWaitBegin()
	defer ctxWaitEnd()
	return ctxwait.Acquire(m, m, done, true)
}

// unlockSync releases m, a Mutex's sync.Mutex, past Unlock's fast path:
// through ctxwait while a LockContext waits for some Mutex, else as sync
// does. A waiter that registers just after the check is found by its poll
// (internal/ctxwait's rule 2), as for the fast path.
func unlockSync(m *sync.Mutex) {
	if ctxwait.Waiting() {
		ctxwait.Unlock(m, m)
		return
	}
	m.Unlock()
}
