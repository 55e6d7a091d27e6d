//go:build !syncwatch_off

package lockorder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/waits"
)

// locker is a lock with a non-blocking attempt.
type locker interface {
	Lock()
	TryLock() bool
}

// spins is how many times a contended lock is retried in ModeCheck, with a
// short pause, before the wait is timed and recorded: most contended waits
// end within nanoseconds, and those are not worth two clock reads, the
// wait slot and the profile.
const spins = 4

func spin(lk locker) bool {
	for range spins {
		pause(32)
		if lk.TryLock() {
			return true
		}
	}
	return false
}

// pause busy-waits for about n loop iterations.
//
//go:noinline
func pause(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	return s
}

// checkWait blocks on lk for gs, recording the wait in gs so that others
// (a barrier that is missing this goroutine) can tell what it waits for.
func checkWait(gs *held.G, l *class.Lock, read bool, lk locker) {
	if spin(lk) {
		return
	}
	start := mono.Now()
	holder := l.Holder()
	gs.BeginWait(l, read, start)
	if modeWord.Load()&profileBit != 0 {
		beginWaitNote(gs)
		lk.Lock()
		endWaitNote(gs)
	} else {
		lk.Lock()
	}
	gs.EndWait()
	observeWait(context.Background(), l, start, holder)
}

// traceWait blocks on lk and traces the wait if it was long. Unlike
// checkWait it does not spin first: measured on a shared mutex, sync's own
// spinning inside Lock (which tells Unlock a waiter is awake) beats ours,
// and the wait costs only two clock reads besides.
func traceWait(l *class.Lock, lk locker) {
	start := mono.Now()
	lk.Lock()
	observeWait(context.Background(), l, start, 0)
}

// waitContext acquires lk, or gives up when ctx is done, through
// lockWithContext: a helper goroutine waits in lk.Lock, and one whose
// caller gave up stays queued (to be reused by the next wait on lk) until
// it gets the lock, which it then releases at once.
func waitContext(ctx context.Context, gs *held.G, l *class.Lock, read bool, lk sync.Locker, unlock func()) error {
	start := mono.Now()
	gid := goid.ID()
	kind := "lock"
	if read {
		kind = "rlock"
	}
	var holder int64
	if gs != nil {
		holder = l.Holder()
	}
	waits.Begin(waits.Wait{Goroutine: gid, Kind: kind, Object: l.Name(), ObjectID: l.ID, Holder: holder, Since: time.Now()})
	defer waits.End(gid)

	if lockWithContext(ctx, lk, unlock) {
		observeWait(ctx, l, start, holder)
		return nil
	}
	if gs != nil {
		holder = l.Holder()
		gs.Pop() // drop the pending entry before any user code (the handler) runs
	}
	err := &WaitError{Lock: l.Name(), Holder: holder, Waited: mono.Since(start), Err: ctx.Err()}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reportWaitTimeout(ctx, gid, l, err)
	}
	return err
}

func reportWaitTimeout(ctx context.Context, gid int64, l *class.Lock, err *WaitError) {
	st := stack.Capture()
	v := Violation{
		Kind:      KindWaitTimeout,
		Message:   fmt.Sprintf("goroutine %d gave up waiting for %s after %v", gid, l.Name(), err.Waited.Round(time.Microsecond)),
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
		Holder:    err.Holder,
		Waited:    err.Waited,
		Err:       err,
		Key:       fmt.Sprintf("%s:%d:%d", KindWaitTimeout, l.Class.ID, st),
	}
	if err.Holder != 0 {
		v.Message += fmt.Sprintf(", held by goroutine %d", err.Holder)
		_, fs := stack.ParseGoroutine(stack.Goroutine(err.Holder))
		for _, f := range fs {
			v.HolderStack = append(v.HolderStack, Frame(f))
		}
		if w, ok := waits.Lookup(err.Holder); ok {
			v.Detail = fmt.Sprintf("goroutine %d is itself waiting for %s %s", err.Holder, w.Kind, w.Object)
		}
	}
	publishContext(ctx, v)
}
