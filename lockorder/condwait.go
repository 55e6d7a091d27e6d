//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/kind"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// unlockL unlocks c.L for Wait, which takes it again before it returns:
// for this package's locks, the release does not end the caller's
// section under c.L (R23).
func (c *Cond) unlockL() {
	switch l := c.L.(type) {
	case *Mutex:
		l.unlockInWait()
	case *RWMutex:
		l.unlockInWait()
	default:
		c.L.Unlock()
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
