//go:build !syncwatch_off

package lockorder

import (
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/hb"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// A WaitGroup waits for a collection of goroutines to finish. It is a
// drop-in replacement for [sync.WaitGroup]: the zero value is ready, and
// Add, Done, Wait and Go have sync's meanings (a Done synchronizes before
// the return of the Wait it unblocks; a negative counter panics).
//
// It adds what sync cannot see. A Wait that blocks is a wait of the
// wait-for graph, naming the goroutines started by [WaitGroup.Go] that have
// not returned: a cycle through it (a Go'd function waits for a lock the
// waiter holds) is a deadlock report. In ModeCheck a WaitGroup is a node of
// the lock-order graph: Wait called while holding lock L, where a function
// started by Go takes L, is a lock-order cycle, reported the first time both
// are seen, whether or not they overlapped, unless the function had been
// waited for before L was taken. (Goroutines counted with Add and Done are
// waited for too, but syncwatch cannot tell which they are.) What a
// goroutine did before its Done happens before what the goroutine whose
// Wait returned does after: two lock orders kept apart so are no cycle.
//
// A WaitGroup must not be copied after first use.
type WaitGroup struct {
	wg sync.WaitGroup
	n  atomic.Int64 // the counter, as far as Wait needs to know
	l  atomic.Pointer[class.Lock]
	// clock is what the Dones released, for Wait to acquire (R21).
	clock atomic.Pointer[hb.Clock]

	mu sync.Mutex
	// running has the goroutines started by Go, not yet returned, that
	// found no record in goStarted (see started.go).
	running map[int64]struct{}
	// unheld are the Waits made before any Go, kept for the first (R22).
	unheld []unheldWait
}

func (wg *WaitGroup) lock() *class.Lock {
	if l := wg.l.Load(); l != nil {
		return l
	}
	return wg.written(initLock(&wg.l, kind.WaitGroup, unsafe.Pointer(wg)))
}

// first is lock for a Wait, the group's first use, if the Wait is
// nested: one unwind names the group and is the stack of its edges, which
// wg.enter records or keeps (firstNested); nil if it is not. A program
// that waits on a new group each time under a Go'd function's hold (a
// queue of requests, each with a group of its own) unwinds once per
// group, not twice. The stack starts at Wait's caller, as wg.enter's own
// capture does.
//
//go:noinline
func (wg *WaitGroup) first(w uint32, gid int64) (*class.Lock, stack.ID) {
	l, st := firstNested(&wg.l, kind.WaitGroup, unsafe.Pointer(wg), w, gid, 2)
	if l == nil {
		return nil, 0
	}
	return wg.written(l), st
}

// written marks the class of l, wg's identity, written (see lock).
func (wg *WaitGroup) written(l *class.Lock) *class.Lock {
	// A Wait is a write, and a group's read holds (its Go'd functions')
	// never wait: its class is written, with no writers' gate, from the
	// start (R4, R7), and a Wait on a fresh group under a lock makes no
	// node (R22).
	l.Class.MarkWritten(false)
	return l
}

// Add adds delta, which may be negative, to the counter. As with sync, a
// counter that goes negative panics, and Adds that start from zero must
// happen before Wait.
func (wg *WaitGroup) Add(delta int) {
	if delta < 0 {
		// What the caller did happens before the Wait this may end
		// (R21): published before the counter moves.
		wg.released()
	}
	wg.wg.Add(delta)
	wg.n.Add(int64(delta))
}

// released publishes, in ModeCheck, the calling goroutine's clock to wg's
// Wait callers (R21).
func (wg *WaitGroup) released() {
	if Mode(modeWord.Load()&modeMask) == ModeCheck {
		releaseClock(&wg.clock)
	}
}

// Done decrements the counter by one.
func (wg *WaitGroup) Done() { wg.Add(-1) }

// Wait blocks until the counter is zero.
func (wg *WaitGroup) Wait() {
	w := modeWord.Load()
	if Mode(w&modeMask) == ModeOff {
		wg.wg.Wait()
		return
	}
	gid := goid.ID()
	l, st := wg.l.Load(), stack.ID(0)
	if l == nil {
		if l, st = wg.first(w, gid); l == nil {
			l = wg.lock() // not nested: named as before, from here
		}
	}
	if wg.n.Load() != 0 && wg.isRunning(gid) {
		selfWait(gid, l, waitfor.KindWaitGroup, waitInsideItsGo(l.Name()))
	}
	var gs *held.G
	if Mode(w&modeMask) == ModeCheck {
		// Only a group some Go'd function has held can be in an order
		// cycle: until then a Wait's edges are kept for the first Go
		// (R22: wg.enter).
		if wg.n.Load() == 0 {
			if gs := ownState(w, gid); gs != nil && gs.Tag() == w && gs.Len() > 0 {
				wg.enter(gs, l, st) // the same call, a little earlier, would have waited
				leaveBlocking(gs, l)
			}
			wg.wg.Wait()
			acquireNow(&wg.clock)
			return
		}
		gs = current(w)
		wg.enter(gs, l, st)
		defer leaveAcquiring(gs, l, &wg.clock) // the Dones that ended the wait happened before (R21)
	}
	if wg.n.Load() == 0 {
		wg.wg.Wait()
		return
	}
	blockers, count := wg.weakly()
	wt := blockOn(gs, gid, l, waitfor.KindWaitGroup, blockers, count)
	defer waitfor.End(wt)
	wg.wg.Wait()
}

// Go calls f in a new goroutine and adds that task to the WaitGroup: Add(1)
// before, Done after f returns, as sync.WaitGroup.Go does. f should not
// panic: as with sync, a panic in f ends the program without Done, so that
// Wait cannot return (and the program exit normally) while the panic is
// under way.
func (wg *WaitGroup) Go(f func()) {
	wg.Add(1)
	var inherit *hb.Clock
	if Mode(modeWord.Load()&modeMask) == ModeCheck {
		// Made here, the group is named after the caller's code; its
		// class can be held from now on, before any Wait sees the task
		// (R22).
		if l := wg.lock(); !l.Class.Held() {
			wg.holdable(l)
		}
		inherit = forkClock()
	}
	if inherit == nil {
		// The common case's closure is a size class smaller.
		go func() { wg.run(f, nil) }()
	} else {
		go func() { wg.run(f, inherit) }()
	}
}

// run is the goroutine Go starts: f, knowing inherit (R21), then Done.
func (wg *WaitGroup) run(f func(), inherit *hb.Clock) {
	defer func() {
		if x := recover(); x != nil {
			panic(x)
		}
		wg.Done()
	}()
	w := modeWord.Load()
	if Mode(w&modeMask) == ModeOff {
		f()
		return
	}
	gid := goid.ID()
	var l *class.Lock
	if Mode(w&modeMask) == ModeCheck {
		l = wg.lock()
	}
	if r := startTracking(gid, wg, w, l, inherit); r != nil {
		defer r.stop(gid)
	} else {
		wg.track(gid, w, l, inherit)
		defer wg.untrack(gid, w, l)
	}
	f()
	if l != nil {
		// Before stop gives the goroutine's state up: Done finds none
		// (R21).
		releaseClock(&wg.clock)
	}
}

// track records goroutine gid, started by Go, in wg's own map, for a
// goroutine that found its window of goStarted full; in check mode
// (l is the group's identity) it takes the group's hold at once: f runs
// holding the group for reading, so that the locks f takes are ordered
// after the group, and a Wait under one of them closes a cycle (a Wait is
// a write that needs every reader gone), knowing inherit, what Go's
// caller knew (R21). untrack undoes it as the goroutine ends.
func (wg *WaitGroup) track(gid int64, w uint32, l *class.Lock, inherit *hb.Clock) {
	wg.mu.Lock()
	if wg.running == nil {
		wg.running = map[int64]struct{}{}
	}
	wg.running[gid] = struct{}{}
	wg.mu.Unlock()
	if l != nil {
		gs := current(w)
		learn(gs, inherit) // what Go's caller knew (R21), as adoptGroup gives it
		tryAcquired(gs, l, true, false)
	}
}

func (wg *WaitGroup) untrack(gid int64, w uint32, l *class.Lock) {
	if l != nil {
		leaveBlocking(current(w), l)
		// The goroutine ends here: its state, if it holds nothing, frees
		// its slot now (see gls.Release).
		gls.Release(gid)
	}
	wg.mu.Lock()
	delete(wg.running, gid)
	wg.mu.Unlock()
}

// isRunning reports whether goroutine gid was started by Go and has not
// returned.
func (wg *WaitGroup) isRunning(gid int64) bool {
	if startedBy(gid, wg) {
		return true
	}
	wg.mu.Lock()
	defer wg.mu.Unlock()
	_, ok := wg.running[gid]
	return ok
}

// blockers lists the goroutines started by Go that have not returned, for
// the wait-for graph.
// weakly returns blockers, and wg's counter (W3), through one weak
// pointer: a wait in the wait-for graph must not keep wg reachable, or
// the runtime could never find its waiters leaked (see ReportBlocked).
func (wg *WaitGroup) weakly() (blockers func([]int64) []int64, count func() (int64, bool)) {
	p := weak.Make(wg)
	blockers = func(dst []int64) []int64 {
		if wg := p.Value(); wg != nil {
			return wg.blockers(dst)
		}
		return dst
	}
	count = func() (int64, bool) {
		if wg := p.Value(); wg != nil {
			return wg.n.Load(), true
		}
		return 0, false
	}
	return blockers, count
}

func (wg *WaitGroup) blockers(dst []int64) []int64 {
	dst = appendStarted(dst, wg)
	wg.mu.Lock()
	defer wg.mu.Unlock()
	for id := range wg.running {
		dst = append(dst, id)
	}
	return dst
}
