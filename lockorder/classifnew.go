//go:build !syncwatch_off

package lockorder

import (
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/kind"
)

// SetClassIfNew puts m in the class called name, as [Mutex.SetClass]
// does, if m has no identity yet, and otherwise does nothing: a Mutex
// already used or named keeps its name. Unlike SetClass it never panics,
// so it may be called at every use of m; once m has an identity it costs
// one atomic load. syncwatch test calls it where the rewritten code locks
// a lock it knows by its declaration ("store.DB.revMu").
func (m *Mutex) SetClassIfNew(name string) {
	if m.l.Load() == nil {
		m.l.CompareAndSwap(nil, newLock(name, kind.Mutex, unsafe.Pointer(m)))
	}
}

// SetClassIfNew puts m in the class called name if m has no identity yet,
// and otherwise does nothing; see [Mutex.SetClassIfNew].
func (m *RWMutex) SetClassIfNew(name string) {
	if m.l.Load() == nil {
		m.l.CompareAndSwap(nil, newLock(name, kind.RWMutex, unsafe.Pointer(m)))
	}
}
