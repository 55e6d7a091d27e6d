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
// one atomic load. (syncwatch test calls SetNameIfNew instead.)
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

// SetNameIfNew puts m in the class of its declaration, name
// ("store.DB.mu"), if m has no identity yet, and otherwise does nothing.
// It never panics, and once m has an identity it costs one atomic load.
// syncwatch test calls it where the rewritten code locks a lock it knows
// by its declaration.
//
// A declaration's class predicts less than a class named with SetClass:
// an order between two of its locks is assumed for every lock of their
// declarations only when both are declared by one type (two fields of
// a struct type, "store.DB.mu" and "store.DB.idx"); between locks of
// different types (a child's lock taken under its parent's) it joins
// those two locks only, so that objects of two types in fixed roles (a
// tree whose levels alternate them) are no cycle unless two of their
// locks were taken in both orders (docs/RULES.md R2).
func (m *Mutex) SetNameIfNew(name string) {
	if m.l.Load() == nil {
		m.l.CompareAndSwap(nil, keyed(class.NewDeclared(name, kind.Mutex, uintptr(unsafe.Pointer(m)))))
	}
}

// SetNameIfNew puts m in the class of its declaration if m has no
// identity yet, and otherwise does nothing; see [Mutex.SetNameIfNew].
func (m *RWMutex) SetNameIfNew(name string) {
	if m.l.Load() == nil {
		m.l.CompareAndSwap(nil, keyed(class.NewDeclared(name, kind.RWMutex, uintptr(unsafe.Pointer(m)))))
	}
}
