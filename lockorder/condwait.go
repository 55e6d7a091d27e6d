//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/kind"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// unlockL unlocks c.L for Wait, which takes it again before it returns:
// for this package's locks, the release does not end the caller's
// section under c.L (R23).
func (c *Cond) unlockL() {
	if l, ok := c.L.(waitLocker); ok {
		l.unlockInWait()
		return
	}
	c.L.Unlock()
}

// waitLocker is what a Cond's Wait asks of this package's locks: the
// release that keeps the caller's section going (R23), and the lock's
// identity.
type waitLocker interface {
	unlockInWait()
	lock() *class.Lock
}

func (m *Mutex) unlockInWait()   { m.unlockSlow(true) }
func (m *RWMutex) unlockInWait() { m.unlock(true) }
func (r *rlocker) unlockInWait() { (*RWMutex)(r).runlockInWait() }

// lock returns the identity of the RWMutex r read-locks.
func (r *rlocker) lock() *class.Lock { return (*RWMutex)(r).lock() }

// relockL locks c.L again for Wait. For this package's locks, the hold
// taken again is the one unlockL released, as R23 sees it: if edges into
// c.L wait on the goroutine, it is marked, so that its release, the
// section's end, is seen (markInto), as the first hold's would have been.
func (c *Cond) relockL() {
	c.L.Lock()
	w := modeWord.Load()
	if Mode(w&modeMask) != ModeCheck {
		return // no identity made: other modes make none at a Wait
	}
	m, ok := c.L.(waitLocker)
	if !ok {
		return
	}
	l := m.lock()
	id := goid.ID()
	gs := gls.Home(id)
	if gs == nil {
		gs = gls.Find(id) // away from its home slot, taken by another's
	}
	if gs != nil && gs.Tag() == w && gs.ProvingInto(l.ID) {
		if i := gs.Find(l); i >= 0 {
			gs.MarkProving(i)
		}
	}
}

// block waits for w to be signalled by Signal or Broadcast, registered in
// the wait-for graph.
func (c *Cond) block(w *condWaiter) {
	if loadMode() == ModeOff {
		c.await(w)
		return
	}
	l := c.id.l.Load()
	if l == nil {
		l = initLock(&c.id.l, kind.Cond, unsafe.Pointer(c))
	}
	// The Lock field names the Cond; a Cond wait has no holder. In
	// ModeCheck it lists the locks the goroutine holds while it waits.
	wt := &waitfor.Wait{Goroutine: goid.ID(), Kind: waitfor.KindCond, ObjectID: l.ID, Lock: l}
	if w := modeWord.Load(); Mode(w&modeMask) == ModeCheck {
		if gs := ownState(w, wt.Goroutine); gs != nil && gs.Tag() == w {
			wt.Holds = holdsOf(gs, 0)
		}
	}
	waitfor.Begin(wt)
	c.await(w)
	waitfor.End(wt)
}

// condID is a Cond's identity, for its name in reports.
type condID struct{ l atomic.Pointer[class.Lock] }
