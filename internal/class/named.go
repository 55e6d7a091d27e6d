package class

import (
	"runtime"
	"sync"
	"weak"

	"github.com/syncwatch/syncwatch/internal/kind"
)

// The registry of named classes, and when a class leaves it.
//
// A class is found by name while some lock of it is alive. Its live locks
// share a token that the class holds only weakly, so that the token
// becomes unreachable when the last of them does; a cleanup then frees the
// class: the registry forgets the name, and the class itself is collected
// once nothing refers to it. A program that names a lock per connection
// ("conn-%d") keeps only its live connections' classes. The weak pointer
// and the cleanup are made once per class coming to life, not per lock, so
// that creating locks under a name in use costs nothing more.
//
// A class the lock-order graph knows of (see Keep) carries what was learnt
// of its locks' order, which a later lock of the same name must find: it
// stays, dormant, after its last lock dies. The MaxDormant most recently
// dormant classes are kept; past that the oldest is freed, and Forget
// tells the graph's owner to drop it too.

// MaxDormant is how many dormant classes are kept: far more than the lock
// names of a program with a fixed set of them, while a program that makes
// up names per instance keeps a bounded number.
const MaxDormant = 1 << 12

// Forget, when set (once, at initialization), is called with each kept
// class freed for want of room (see Keep), with no lock of this package
// held.
var Forget func(c *Class)

var (
	namedMu sync.Mutex
	named   = map[string]*Class{}
	// dormant lists the dormant classes, oldest first; maxDormant is
	// MaxDormant but for tests.
	dormant    dormantList
	maxDormant = MaxDormant
)

// liveness is the token shared by the live locks of a named class. It is
// 16 bytes so that it gets a memory block of its own: smaller objects
// without pointers share blocks, and its cleanup would wait for its
// neighbours.
type liveness struct{ class, _ uint64 }

// state is a named class's place in the registry.
type state uint8

const (
	stateLive    state = iota // some lock of it may be alive
	stateDormant              // none is, and the graph keeps it: in dormant
	stateGone                 // freed: no longer found by name
)

// registration is a named class's registry fields, guarded by namedMu.
type registration struct {
	live       weak.Pointer[liveness] // the live locks' token
	state      state
	kept       bool
	prev, next *Class // in dormant
}

// NewNamed returns the identity of a new lock in the class called name,
// creating the class if no lock of that name is alive or kept. k and
// addr are as for New.
func NewNamed(name string, k kind.Kind, addr uintptr) *Lock {
	mustKind(k)
	namedMu.Lock()
	c := named[name]
	if c == nil {
		c = &Class{ID: newID(), Name: name, Named: true}
		named[name] = c
	}
	t := join(c)
	namedMu.Unlock()
	return newLock(c, t, k, addr)
}

// join returns the token of c's live locks for a new one, making one (and
// bringing c back to life, if it was dormant) when none is left. Called
// with namedMu held.
func join(c *Class) *liveness {
	if t := c.reg.live.Value(); t != nil {
		return t
	}
	t := &liveness{class: c.ID}
	c.reg.live = weak.Make(t)
	runtime.AddCleanup(t, lastLockGone, c)
	switch c.reg.state {
	case stateDormant:
		dormant.remove(c)
	case stateGone:
		// Only a caller of New breaking its contract gets here.
		if named[c.Name] == nil {
			named[c.Name] = c
		}
	}
	c.reg.state = stateLive
	return t
}

// lastLockGone runs once the token shared by c's locks has been
// collected: no lock of c is alive, unless join has made c another token
// since.
func lastLockGone(c *Class) {
	var freed []*Class
	namedMu.Lock()
	if c.reg.live.Value() == nil && c.reg.state == stateLive {
		if c.reg.kept {
			c.reg.state = stateDormant
			dormant.push(c)
			for dormant.n > maxDormant {
				old := dormant.head
				dormant.remove(old)
				old.reg.kept = false
				drop(old)
				freed = append(freed, old)
			}
		} else {
			drop(c)
		}
	}
	forget := Forget
	namedMu.Unlock()
	if forget != nil {
		for _, c := range freed {
			forget(c)
		}
	}
}

// drop removes c from the registry. Called with namedMu held.
func drop(c *Class) {
	if named[c.Name] == c {
		delete(named, c.Name)
	}
	c.reg.state = stateGone
}

// Keep records that the lock-order graph knows of c, so that c, when no
// lock of it is left, stays dormant rather than being freed at once. The
// caller must hold a live lock of c. It does nothing for an anonymous
// class, which the graph drops with its lock.
func Keep(c *Class) {
	if !c.Named {
		return
	}
	namedMu.Lock()
	c.reg.kept = true
	namedMu.Unlock()
}

// Unkeep undoes Keep, after the graph forgot c: a dormant c is freed.
func Unkeep(c *Class) {
	if !c.Named {
		return
	}
	namedMu.Lock()
	c.reg.kept = false
	if c.reg.state == stateDormant {
		dormant.remove(c)
		drop(c)
	}
	namedMu.Unlock()
}

// Count returns the number of named classes in the registry: those with a
// live lock, and the dormant ones.
func Count() int {
	namedMu.Lock()
	defer namedMu.Unlock()
	return len(named)
}

// IsDormant reports whether the named class name is dormant: no lock of it
// is alive, and the graph keeps it.
func IsDormant(name string) bool {
	namedMu.Lock()
	defer namedMu.Unlock()
	c := named[name]
	return c != nil && c.reg.state == stateDormant
}

// dormantList is a doubly linked list of classes through their
// registrations, oldest first.
type dormantList struct {
	head, tail *Class
	n          int
}

func (d *dormantList) push(c *Class) {
	c.reg.prev, c.reg.next = d.tail, nil
	if d.tail != nil {
		d.tail.reg.next = c
	} else {
		d.head = c
	}
	d.tail = c
	d.n++
}

func (d *dormantList) remove(c *Class) {
	if c.reg.prev != nil {
		c.reg.prev.reg.next = c.reg.next
	} else {
		d.head = c.reg.next
	}
	if c.reg.next != nil {
		c.reg.next.reg.prev = c.reg.prev
	} else {
		d.tail = c.reg.prev
	}
	c.reg.prev, c.reg.next = nil, nil
	d.n--
}
