//go:build !syncwatch_off

package lockorder

import (
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/class"
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

// SetNameIfNew names m after its declaration, name ("store.DB.mu"), if m
// has no identity yet, and otherwise does nothing. Unlike SetClassIfNew it
// leaves m in a class of its own, as a zero-value Mutex is: the name is
// for reports ("store.DB.mu#2"; cycles and their keys say "store.DB.mu"),
// and a cycle is reported only through the locks that were taken, never
// predicted from other locks of the same name (docs/RULES.md R2). It never
// panics, and once m has an identity it costs one atomic load. syncwatch
// test calls it where the rewritten code locks a lock it knows by its
// declaration.
func (m *Mutex) SetNameIfNew(name string) {
	if m.l.Load() == nil {
		m.l.CompareAndSwap(nil, declaredLock(name, kind.Mutex, unsafe.Pointer(m)))
	}
}

// SetNameIfNew names m after its declaration if m has no identity yet,
// and otherwise does nothing; see [Mutex.SetNameIfNew].
func (m *RWMutex) SetNameIfNew(name string) {
	if m.l.Load() == nil {
		m.l.CompareAndSwap(nil, declaredLock(name, kind.RWMutex, unsafe.Pointer(m)))
	}
}

// declaredLock returns the identity of a new lock of kind k at p, in a
// class of its own, named after the declaration name.
func declaredLock(name string, k kind.Kind, p unsafe.Pointer) *class.Lock {
	return keyed(class.NewAt(declaration(name), k, uintptr(p)))
}
