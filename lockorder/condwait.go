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
	switch l := c.L.(type) {
	case *Mutex:
		l.unlockSlow(true)
	case *RWMutex:
		l.unlock(true)
	case *rlocker:
		(*RWMutex)(l).runlockInWait()
	default:
		c.L.Unlock()
	}
}

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
	var l *class.Lock
	switch m := c.L.(type) {
	case *Mutex:
		l = m.lock()
	case *RWMutex:
		l = m.lock()
	case *rlocker:
		l = (*RWMutex)(m).lock()
	default:
		return
	}
	if gs := gls.Home(goid.ID()); gs != nil && gs.Tag() == w && gs.ProvingInto(l.ID) {
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
