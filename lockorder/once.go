//go:build !syncwatch_off

package lockorder

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/hb"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/kind"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// Once is an object that performs exactly one action. It is a drop-in
// replacement for [sync.Once]: the zero value is ready, Do has sync's
// meaning (f runs once; every Do returns after it has; if f panics, Do
// counts it as done), and the completion of f synchronizes before the
// return of every Do.
//
// It adds what sync cannot see. A Do that waits for another goroutine's f
// is a wait of the wait-for graph, naming the goroutine running f, so a
// cycle through it (f waits for a lock the caller holds) is a deadlock
// report. In ModeCheck a Once is a node of the lock-order graph: a Do
// called while holding lock L, where f (on any goroutine) takes L, is a
// lock-order cycle, reported the first time both are seen; but not a Do
// by a goroutine that saw the Once done before (its earlier Do returned,
// or it ran f), which cannot wait. A Do called from
// inside its own f, which sync leaves blocked for good, is a deadlock report
// at once.
//
// A Once must not be copied after first use.
type Once struct {
	done   atomic.Uint32
	m      sync.Mutex
	runner atomic.Int64 // the goroutine running f, 0 if none
	l      atomic.Pointer[class.Lock]
	clock  atomic.Pointer[hb.Clock] // the completion's, for Do to acquire (R21)
}

func (o *Once) lock() *class.Lock {
	if l := o.l.Load(); l != nil {
		return l
	}
	return initLock(&o.l, kind.Once, unsafe.Pointer(o))
}

// first is lock for doSlow, the Once's first use, if the Do is nested:
// one unwind names the Once and is the stack of its new chain
// (firstNested); nil if it is not. An object with a Once of its own, done
// under its lock (a close of each connection), unwinds once, not twice.
//
//go:noinline
func (o *Once) first(w uint32, gid int64) (*class.Lock, stack.ID) {
	return firstNested(&o.l, kind.Once, unsafe.Pointer(o), w, gid, 0)
}

// Do calls f if and only if Do is being called for the first time for
// this Once. Other calls wait until f has returned, then return.
func (o *Once) Do(f func()) {
	if o.done.Load() != 0 {
		if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
			doneOnce(w, o.lock(), &o.clock)
		}
		return
	}
	o.doSlow(f)
}

// doneOnce records, in ModeCheck, the edges of a Do on the done Once
// whose identity is l: the same Do, made before the Once's function
// returned, would have waited for it (see orderOnly). Unless the calling
// goroutine has seen the Once done before (a Do of it returned, or it ran
// the function, in this goroutine): then this Do is ordered after the
// Once's completion by the goroutine's own program order, cannot wait in
// any run that takes the same path, and records no edge. So too for a
// lock the goroutine took inside the Once's function and holds since. A
// goroutine that may have forgotten the Onces it saw done (its state was
// dropped while idle and not revived: held.G.Forgetful) records none
// either: it cannot tell, and an edge recorded wrongly would be a false
// report.
func doneOnce(w uint32, l *class.Lock, c *atomic.Pointer[hb.Clock]) {
	gs := current(w)
	acquireClock(gs, c) // the function's completion happened before (R21)
	if passed := gs.PassOnce(l.ID); passed || gs.Len() == 0 || gs.Forgetful() {
		if !passed && gs.Len() > 0 {
			sightOnly(gs, l) // it may have waited: its pairs count (R26)
		}
		gs.Rest()
		return
	}
	enterBlocking(gs, l, 0)
	leaveBlocking(gs, l)
}

func (o *Once) doSlow(f func()) {
	w := modeWord.Load()
	if Mode(w&modeMask) == ModeOff {
		o.m.Lock()
		defer o.m.Unlock()
		if o.done.Load() == 0 {
			defer o.done.Store(1)
			f()
		}
		return
	}
	gid := goid.ID()
	l, st := o.l.Load(), stack.ID(0)
	if l == nil {
		if l, st = o.first(w, gid); l == nil {
			l = o.lock() // not nested: named as before, from here
		}
	}
	if o.runner.Load() == gid {
		selfWait(gid, l, waitfor.KindOnce, doInsideOwnFunction(l.Name()))
	}
	var gs *held.G
	if Mode(w&modeMask) == ModeCheck {
		gs = current(w)
		enterBlocking(gs, l, st)
	}
	if !o.m.TryLock() {
		wt := blockOn(gs, gid, l, waitfor.KindOnce, o.blockers, nil)
		o.m.Lock()
		waitfor.End(wt)
	}
	if o.done.Load() != 0 {
		o.m.Unlock()
		if gs != nil {
			gs.PassOnce(l.ID) // seen done: see doneOnce
			leaveAcquiring(gs, l, &o.clock)
		}
		return
	}
	// This goroutine runs f, holding the Once: locks f takes are ordered
	// after it.
	if gs != nil {
		holds(gs, l)
	}
	o.runner.Store(gid)
	defer func() {
		o.runner.Store(0)
		if gs != nil {
			gs.PassOnce(l.ID) // ran it: see doneOnce
			// Before done is seen (R21): its clock, or what it learnt
			// with no clock of its own.
			switch {
			case gs.HB != nil:
				gs.HB.Release(&o.clock)
			case gs.Inherit != nil:
				hb.Publish(&o.clock, gs.Inherit)
			}
			leaveBlocking(gs, l)
		}
		o.done.Store(1)
		o.m.Unlock()
	}()
	f()
}

// blockers names the goroutine running f, for the wait-for graph.
func (o *Once) blockers(dst []int64) []int64 {
	if r := o.runner.Load(); r != 0 {
		dst = append(dst, r)
	}
	return dst
}
