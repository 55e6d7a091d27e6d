package lockorder

import "github.com/syncwatch/syncwatch/internal/ctxwait"

// CtxWaiters returns how many LockContext and RLockContext calls wait
// beside a sync lock (internal/ctxwait), of every lock.
func CtxWaiters() int { return ctxwait.Registered() }
