package class

import "sync/atomic"

// firstWrite is what is known of a lock's own acquisitions in check mode
// as to its first write (docs/RULES.md R11): whether that write was its
// initialisation, and whether it counts yet. A Lock embeds one; its zero
// value is a lock never acquired.
//
// It is read-mostly: set at the first acquisition, and written again at
// most twice (the initialisation write's release, and the evidence that
// makes it count). An acquisition loads it once, and that is all for a
// Plain lock. Its methods are called on the Lock.
type firstWrite struct {
	// use is one of the states below, and while an initialisation write
	// does not count, the number of goroutine states that existed when
	// it was made (above useBits).
	use atomic.Uint64
	// by is the goroutine state (its number) that made the initialisation
	// write. Stored by the writer before it releases the lock: read only
	// in initDone, which that release sets.
	by atomic.Uint64
}

// The states in firstWrite.use's low useBits bits.
const (
	// unused: the lock was never acquired in check mode.
	unused = iota
	// plain: the lock was acquired; its first write, if it was an
	// initialisation, counts now, or it never will (see Plain).
	plain
	// initHeld: the lock's first acquisition was a write made with nothing
	// else held, its initialisation, and it is held, nothing showing the
	// lock shared so far.
	initHeld
	// initDone: that write was released, nothing having shown the lock
	// shared; it does not count unless a goroutine that existed when it
	// was made acquires or releases the lock (see Lock.Witness).
	initDone

	useBits = 2
	useMask = 1<<useBits - 1
)

// Use says what a check-mode acquisition of a lock is to its first write:
// see Lock.Use.
type Use uint8

const (
	// Plain: nothing to do.
	Plain Use = iota
	// Init: this acquisition is the lock's first, a write with nothing else
	// held: its initialisation, which does not count as a write of its
	// class until the lock shows itself shared.
	Init
	// Shared: this acquisition shows the lock shared when its
	// initialisation write was made, and ended its exemption: the caller
	// counts that write, now, as a write made with nothing held.
	Shared
)

// Plain reports whether there is nothing to do about the lock's first
// write: it was acquired before, and its first write was no
// initialisation, or counts now, or never will. It is the one load an
// acquisition of such a lock makes here, and it inlines.
func (f *firstWrite) Plain() bool { return f.use.Load() == plain }

// Quiet reports whether an acquisition of the lock by the goroutine whose
// state is the seq-th created has nothing to do about its first write: it
// is Plain, or its initialisation write is done and the goroutine is no
// witness of it (it is the writer's, or came later: see Lock.Witness). It
// is what an acquisition asks, first: one load, and for a lock whose
// initialisation write is done, one more and two comparisons; it inlines.
func (f *firstWrite) Quiet(seq uint64) bool {
	s := f.use.Load()
	return s == plain || s&useMask == initDone && (seq > s>>useBits || seq == f.by.Load())
}

// Use records a check-mode acquisition of l (of any kind), l not being
// Quiet for it, by goroutine gid, whose state is the seq-th created
// (held.G.Seq). initWrite says the acquisition may be l's initialisation
// write: a write made with nothing else held, while the caller's rule for
// them applies; created then returns the number of goroutine states
// created so far (held.Created), called only if it is l's first
// acquisition. It reports Init if it is l's first acquisition and
// initWrite, and Shared if it shows l shared at its initialisation write
// (see Witness), which counts from now on.
//
// Use and Witness are Lock's, not firstWrite's: while the initialisation
// write is held, they ask who holds the lock.
func (l *Lock) Use(initWrite bool, gid int64, seq uint64, created func() uint64) Use {
	f := &l.firstWrite
	s := f.use.Load()
	if s == unused {
		v := uint64(plain)
		if initWrite {
			v = created()<<useBits | initHeld
		}
		if f.use.CompareAndSwap(unused, v) {
			if !initWrite {
				return Plain
			}
			f.by.Store(seq)
			return Init
		}
		s = f.use.Load()
	}
	if f.witness(s, gid, seq, &l.holder) {
		return Shared
	}
	return Plain
}

// Witness is called when goroutine gid, whose state is the seq-th created
// (0 if it has none), acquires l, tries to (a failed TryLock included), or
// releases a hold another goroutine took. It reports whether that shows
// l shared at its initialisation write, ending that write's exemption:
// the caller counts the write, now, as one made with nothing held. While
// the write is held, any other goroutine than its holder shows it; once
// it is released, a goroutine whose state existed when it was made, other
// than the writer's: that goroutine was there, and it has l in hand.
func (l *Lock) Witness(gid int64, seq uint64) bool {
	return l.firstWrite.witness(l.use.Load(), gid, seq, &l.holder)
}

// witness is Lock.Witness with the state loaded, s, and the lock's holder.
func (f *firstWrite) witness(s uint64, gid int64, seq uint64, holder *atomic.Int64) bool {
	switch s & useMask {
	case initDone:
		if seq > s>>useBits || seq == 0 || seq == f.by.Load() {
			return false
		}
	case initHeld:
		if holder.Load() == gid {
			return false
		}
	default:
		return false
	}
	return f.use.CompareAndSwap(s, plain)
}

// MarkUsed records that the lock is not fresh: its first acquisition was
// made before (a copy's new identity: see lockorder's rebind).
func (f *firstWrite) MarkUsed() { f.use.CompareAndSwap(unused, plain) }

// Unused reports whether the lock was never acquired in check mode. It is
// one load.
func (f *firstWrite) Unused() bool { return f.use.Load()&useMask == unused }

// InitHeld reports whether the lock's initialisation write is held,
// nothing showing the lock shared so far: it does not count as a write of
// its class.
func (f *firstWrite) InitHeld() bool { return f.use.Load()&useMask == initHeld }

// InitDone reports whether the lock's initialisation write was released,
// nothing having shown the lock shared so far: it does not count as a
// write of its class.
func (f *firstWrite) InitDone() bool { return f.use.Load()&useMask == initDone }

// EndInit is called when the lock's initialisation write is released by
// its own goroutine: if nothing showed the lock shared meanwhile, the
// write still does not count, until a goroutine witnesses it (see
// Lock.Witness).
func (f *firstWrite) EndInit() {
	if s := f.use.Load(); s&useMask == initHeld {
		f.use.CompareAndSwap(s, s&^useMask|initDone)
	}
}

// CountInit ends the exemption of the lock's initialisation write, held,
// when the write shows the lock shared itself: it has to wait, or its
// goroutine takes another lock under it. It reports whether the write was
// still exempt: then the caller counts it.
func (f *firstWrite) CountInit() bool {
	s := f.use.Load()
	return s&useMask == initHeld && f.use.CompareAndSwap(s, plain)
}
