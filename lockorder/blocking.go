//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/hb"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/stack"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// What Once and WaitGroup share: each has a lock identity of its own (a
// node of the order graph, so that "Wait under L while a Go'd function takes
// L" is a cycle like any other), and both can wait for themselves.

// enterBlocking runs in ModeCheck before a wait on the primitive whose
// identity is l: it records the order edges from the locks gs holds to l,
// as a Lock would, and pushes an entry for l that the caller drops with
// leaveBlocking (or turns into a hold, for a Once's runner).
//
// It is the acquisition path's first step (acquire.go) for a wait, which
// records no use. st is the stack the call took already, to name l
// (firstNested), or zero: the new chain's edges, if any, then take the
// calling goroutine's.
func enterBlocking(gs *held.G, l *class.Lock, st stack.ID) {
	if _, fresh := (acquisition{gs: gs, l: l, f: acqUsed}).begin(notCopied{}); fresh {
		if st == 0 {
			st = stack.Capture()
		}
		newChain(gs, st)
	}
}

// notCopied is the owner of a Once's or a WaitGroup's identity in the
// order graph: a held entry of it is always the goroutine's own, since
// neither is a lock that can be copied and taken twice.
type notCopied struct{}

func (notCopied) free() bool                         { return false }
func (notCopied) rebind(old *class.Lock) *class.Lock { return old }
func (notCopied) at() uintptr                        { return 0 }

// leaveBlocking drops gs's newest entry for l, however the wait ended,
// and rests gs if it holds nothing more: it ends the call.
func leaveBlocking(gs *held.G, l *class.Lock) {
	if i := gs.Find(l); i >= 0 {
		gs.Remove(i)
		endedInto(gs, l)
	}
	gs.Rest()
}

// leaveAcquiring is leaveBlocking for a wait on l that returned after the
// releases to p it waited for (a WaitGroup's Dones, a Once's completion):
// gs, no longer holding l, knows what they published (R21).
func leaveAcquiring(gs *held.G, l *class.Lock, p *atomic.Pointer[hb.Clock]) {
	if i := gs.Find(l); i >= 0 {
		gs.Remove(i)
		endedInto(gs, l)
	}
	acquireClock(gs, p)
	gs.Rest()
}

// orderOnly records, in ModeCheck, the edges a wait on l would add, for a
// call that does not block this time (a Once already done, a WaitGroup at
// zero): the same call, a little earlier, would have.
func orderOnly(w uint32, l *class.Lock) {
	gs := ownState(w, goid.ID())
	if gs == nil || gs.Tag() != w || gs.Len() == 0 {
		return
	}
	enterBlocking(gs, l, 0)
	leaveBlocking(gs, l)
}

// selfWait reports a goroutine that waits for itself for good (Once.Do
// inside its own function, WaitGroup.Wait inside a function the group
// waits for), then carries out the deadlock action: under go test the
// calling goroutine panics with the report. Otherwise the caller goes on to
// block, as sync would.
func selfWait(gid int64, l *class.Lock, kind, what string) {
	st := stack.Capture()
	v := Violation{
		Kind:      KindDeadlock,
		Message:   selfWaitMessage(gid, what),
		Time:      time.Now(),
		Goroutine: gid,
		Stack:     frames(st),
		Locks:     []LockRef{ref(l)},
	}.perCode(KindDeadlock+Kind(":"+kind), l, st)
	c := cfg.Load()
	publish(v)
	actOnDeadlock(c, v)
}

// blockOn registers gid's wait for the primitive l, of kind kind, whose
// end needs the goroutines blockers lists.
func blockOn(gs *held.G, gid int64, l *class.Lock, kind string, blockers func([]int64) []int64, count func() (int64, bool)) *waitfor.Wait {
	w := &waitfor.Wait{Goroutine: gid, Kind: kind, Named: l, ObjectID: l.ID, Class: l.Label().ClassName(), Blockers: blockers, Count: count}
	if gs != nil {
		skip := 0 // the entry for l itself, if the wait pushed one
		if n := gs.Len(); n > 0 && gs.Entries()[n-1].Lock == l {
			skip = 1
		}
		w.Holds = holdsOf(gs, skip)
		if gs.HasProving() {
			if es := gs.Into(l); len(es) > 0 {
				w.Held = es // taken if the wait is proved a deadlock (R23)
			}
		}
	}
	return waitfor.Begin(w)
}
