//go:build !syncwatch_off

package lockorder

import (
	"fmt"
	"unsafe"

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
	wt := waitfor.Begin(&waitfor.Wait{Goroutine: goid.ID(), Kind: waitfor.KindCond, Object: c.name()})
	<-ch
	waitfor.End(wt)
}

// name names c in reports.
func (c *Cond) name() string {
	s := fmt.Sprintf("Cond@%#x", uintptr(unsafe.Pointer(c)))
	if n, ok := c.L.(interface{ lockName() string }); ok {
		s += " on " + n.lockName()
	}
	return s
}

func (m *Mutex) lockName() string   { return m.lock().Name() }
func (m *RWMutex) lockName() string { return m.lock().Name() }
func (r *rlocker) lockName() string { return (*RWMutex)(r).lock().Name() + " (read)" }
