package lockorder

import (
	"context"
	"sync"
	"sync/atomic"
)

// lockWithContext acquires lk, or gives up when ctx is done, and reports
// whether it acquired. A helper goroutine waits in lk.Lock so that the wait
// keeps its place in sync's fair queue; if the caller gives up first, the
// helper releases the lock as soon as it gets it, so an abandoned wait
// never leaves the lock held.
func lockWithContext(ctx context.Context, lk sync.Locker, unlock func()) bool {
	done := ctx.Done()
	if done == nil {
		lk.Lock()
		return true
	}
	const (
		waiting = iota
		taken
		abandoned
	)
	var state atomic.Int32
	got := make(chan struct{})
	go func() {
		lk.Lock()
		if !state.CompareAndSwap(waiting, taken) {
			unlock()
			return
		}
		close(got)
	}()
	select {
	case <-got:
		return true
	case <-done:
		if !state.CompareAndSwap(waiting, abandoned) {
			<-got // the helper took it first: it is ours
			return true
		}
		return false
	}
}
