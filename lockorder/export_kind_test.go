//go:build !syncwatch_off

package lockorder

import (
	"unsafe"

	"github.com/syncwatch/syncwatch/internal/kind"
)

// NewMutexOfKind returns an unlocked mutex in the class called name whose
// identity is of kind k: a primitive of that kind taking the Mutex path,
// as a new primitive modelled on it would, for tests of what the rules
// ask of a kind.
func NewMutexOfKind(name string, k kind.Kind) *Mutex {
	m := new(Mutex)
	m.l.Store(newLock(name, k, unsafe.Pointer(m)))
	return m
}

// NewRWMutexOfKind is NewMutexOfKind for the RWMutex path.
func NewRWMutexOfKind(name string, k kind.Kind) *RWMutex {
	m := new(RWMutex)
	m.l.Store(newLock(name, k, unsafe.Pointer(m)))
	return m
}
