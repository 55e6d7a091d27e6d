// Package kind says what sort of primitive a lock identity stands for,
// and what the engine's rules may assume of its holds.
//
// A rule asks a capability (Exclusive, HandsOff, ...), never a name: a new
// primitive gets a kind whose flags say what it guarantees, and the rules
// that need a guarantee it lacks do not see its holds. The rules are in
// docs/RULES.md; each flag names the ones that ask it.
package kind

import "strconv"

// Kind is the sort of primitive a lock identity stands for. The zero Kind
// is no primitive: it has no capability, and names no type.
type Kind uint8

// The kinds, one per instrumented primitive.
const (
	Mutex Kind = iota + 1
	RWMutex
	Once
	WaitGroup
	Cond
	numKinds // one past the last kind
)

// All lists every kind, for tests that go over them.
func All() []Kind { return []Kind{Mutex, RWMutex, Once, WaitGroup, Cond} }

// The capability bits of a kind.
const (
	lock          = 1 << iota // a lock: Lock and Unlock, a constructor New<Kind>
	exclusive                 // a write hold has one holder
	readable                  // can be held for reading
	handsOff                  // a read hold may be released by another goroutine
	initWrites                // a lock of its own class may have an initialisation write
	counts                    // a hold is a place in a count
	writesHandOff             // a write hold may be released by another goroutine
)

// caps holds the capabilities of each kind.
var caps = [numKinds]uint8{
	// An Unlock may release a hold another goroutine took.
	Mutex: lock | exclusive | writesHandOff,
	// An RUnlock may release a read hold another goroutine took, and an
	// Unlock a write hold.
	RWMutex: lock | exclusive | readable | handsOff | initWrites | writesHandOff,
	// Do's function runs with the Once held for writing, by one goroutine.
	Once: exclusive,
	// A function started by Go holds the group for reading, and releases
	// that hold itself. Wait is a write that many goroutines make at once.
	WaitGroup: readable | counts,
	// A Cond is never held: its identity only names its waits.
	Cond: 0,
}

var names = [numKinds]string{
	Mutex:     "Mutex",
	RWMutex:   "RWMutex",
	Once:      "Once",
	WaitGroup: "WaitGroup",
	Cond:      "Cond",
}

// String returns the name of the kind's type in lockorder ("RWMutex"), as
// reports print it; for a Kind that is none of the constants, "Kind(n)".
func (k Kind) String() string {
	if k.Valid() {
		return names[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Valid reports whether k is one of the constants.
func (k Kind) Valid() bool { return k != 0 && k < numKinds }

func (k Kind) has(c uint8) bool { return k < numKinds && caps[k]&c != 0 }

// Lock reports whether the primitive is a lock, taken and released by
// Lock and Unlock: its name by site needs no type before it, it is made
// by New<Kind>, and its waits are measured under its kind.
func (k Kind) Lock() bool { return k.has(lock) }

// Exclusive reports whether a hold for writing has one holder at a time,
// and no other hold, for reading or writing, while it lasts. Only then may a write hold hold a cycle back: the common gate (R6), the
// writers' gate (R7), the ∃ rule (R8), the pair rule (R9) and R-RW (R18)
// count the holds of exclusive kinds alone. A counting semaphore is not
// exclusive.
func (k Kind) Exclusive() bool { return k.has(exclusive) }

// Readable reports whether the primitive can be held for reading.
func (k Kind) Readable() bool { return k.has(readable) }

// HandsOff reports whether a read hold may be released by a goroutine
// that did not take it. Edges from such holds wait for proof that the
// hold is their goroutine's own (R12, R13).
func (k Kind) HandsOff() bool { return k.has(handsOff) }

// WritesHandOff reports whether a write hold may be released by a
// goroutine that did not take it. Edges from such holds wait until the
// goroutine that took the hold releases it itself (R23).
func (k Kind) WritesHandOff() bool { return k.has(writesHandOff) }

// InitWrites reports whether a lock of the kind, in a class of its own,
// is eligible for initialisation writes (R11): only a class that can be
// read-locked has a writers' gate for such a write to spare. (A lock of
// a named class is eligible whatever its kind: an RWMutex may share it.)
func (k Kind) InitWrites() bool { return k.has(initWrites) }

// Counts reports whether a hold is a place in a count, as a function
// started by WaitGroup.Go is: the primitive waits for every holder, and
// no holder excludes another.
func (k Kind) Counts() bool { return k.has(counts) }
