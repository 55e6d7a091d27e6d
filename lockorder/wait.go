//go:build !syncwatch_off

package lockorder

import (
	"context"
	"errors"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/waitfor"
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
	w := beginLockWait(gs, gs.ID(), l, read, false, start)
	if modeWord.Load()&profileBit != 0 {
		beginWaitNote(gs)
		lk.Lock()
		endWaitNote(gs)
	} else {
		lk.Lock()
	}
	waitfor.End(w)
	observeWait(context.Background(), l, start, holder)
}

// traceWait blocks on lk and traces the wait if it was long. The wait is
// registered in the wait-for graph, without a holder (ModeTrace does not
// track holders), so that a barrier or a long-wait report can say which
// lock a goroutine is blocked on. Unlike checkWait it does not spin
// first: measured on a shared mutex, a spin of ours before sync's Lock
// (which spins itself, telling Unlock a waiter is awake) costs more than
// the registration it saves.
func traceWait(l *class.Lock, lk locker) {
	start := mono.Now()
	w := beginLockWait(nil, goid.ID(), l, false, false, start)
	lk.Lock()
	waitfor.End(w)
	observeWait(context.Background(), l, start, 0)
}

// waitContext acquires lk, or gives up when ctx is done, through
// lockWithContext, which waits on the calling goroutine and leaves
// nothing behind when it gives up.
func waitContext(ctx context.Context, gs *held.G, l *class.Lock, read bool, lk cancelLocker) error {
	start := mono.Now()
	gid := goid.ID()
	var holder int64
	if gs != nil {
		holder = l.Holder()
	}
	// Only a deadline bounds the wait by itself: a context that can be
	// cancelled but has none ends the wait only if some goroutine cancels
	// it, as any goroutine could unlock the lock, so a cycle through it
	// is judged on evidence like any other (rule W1).
	_, bounded := ctx.Deadline()
	w := beginLockWait(gs, gid, l, read, bounded, start)
	defer waitfor.End(w)

	if lockWithContext(ctx, lk) {
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
	if gs != nil {
		gs.Rest()
	}
	return err
}

// doneContext is a check-mode LockContext whose ctx is done before it
// begins: it cannot wait, so it is a try (RULES.md R3), no order edge into
// l. try is the method's own TryLock or TryRLock, which records a hold
// taken; if l is not free, the error is the one a wait that gave up at
// once would return.
func doneContext(ctx context.Context, l *class.Lock, try func() bool) error {
	if try() {
		return nil
	}
	err := &WaitError{Lock: l.Name(), Holder: l.Holder(), Err: ctx.Err()}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reportWaitTimeout(ctx, goid.ID(), l, err)
	}
	return err
}

func reportWaitTimeout(ctx context.Context, gid int64, l *class.Lock, err *WaitError) {
	st := stack.Capture()
	v := Violation{
		Kind:      KindWaitTimeout,
		Message:   waitTimeoutMessage(gid, l.Name(), err.Waited),
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
		Holder:    err.Holder,
		Waited:    err.Waited,
		Err:       err,
		// The bound the caller chose did its job: the caller has the
		// error. Recorded, traced and handed to a handler; no test fails
		// for it (lockordertest's IncludeExpected counts it).
		Expected: true,
	}.perCode(KindWaitTimeout, l, st)
	if err.Holder != 0 {
		// What the holder is doing costs no goroutine dump: its own wait,
		// if it is in one, and its stack only from a dump taken recently
		// for another report.
		v.Message += heldByGoroutine(err.Holder)
		if w := waitfor.Lookup(err.Holder); w != nil {
			v.Detail = itselfWaiting(err.Holder, waitfor.Describe(w))
		} else if d := waitfor.Cached(dumpEvery); d != nil {
			v.HolderStack, _ = routine(d, err.Holder)
			v.Detail = goroutineState(err.Holder, waitfor.RoutineState(d, err.Holder))
		}
	}
	publishContext(ctx, v)
}
