//go:build !syncwatch_off

package lockorder

import (
	"sync/atomic"
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/class"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// block waits for ch to be closed by Signal or Broadcast, registered in
// the wait-for graph.
func (c *Cond) block(ch chan struct{}) {
	if loadMode() == ModeOff {
		<-ch
		return
	}
	l := c.id.l.Load()
	if l == nil {
		l = initLock(&c.id.l, "Cond", unsafe.Pointer(c))
	}
	// The Lock field names the Cond; a Cond wait has no holder.
	wt := waitfor.Begin(&waitfor.Wait{Goroutine: goid.ID(), Kind: waitfor.KindCond, ObjectID: l.ID, Lock: l})
	<-ch
	waitfor.End(wt)
}

// condID is a Cond's identity, for its name in reports.
type condID struct{ l atomic.Pointer[class.Lock] }
