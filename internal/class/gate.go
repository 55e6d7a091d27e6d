package class

import "sync/atomic"

// A gate is what R24 (docs/RULES.md) knows of a lock as a gate of the
// order edges taken under its write holds: whether a release showed its
// holds exclusive, whether R24 took it out of gates, whether an edge was
// seen under a write hold of it, and whether a grave of an exited
// goroutine's hold watches it. It lives on the cache line of a Lock that
// changes of hands write. Its zero value is a lock R24 knows nothing of.
type gate struct{ v atomic.Uint32 }

// The bits of a gate.
const (
	gateShown  = 1 << iota // a release showed the lock's holds exclusive: see Show
	gateTaken              // R24 took the lock out of gates, to put back: see Take
	gateUnder              // an order edge was seen under a write hold of the lock: see MarkUnder
	gateBuried             // a grave of an exited goroutine's hold watches the lock: see Bury
)

// update sets g to f of its value, and returns the value before.
func (g *gate) update(f func(uint32) uint32) uint32 {
	for {
		v := g.v.Load()
		if n := f(v); n == v || g.v.CompareAndSwap(v, n) {
			return v
		}
	}
}

// Show records that a write hold of its lock with order edges under it was
// released, by the goroutine that took it or by another (a hand-off):
// either way the lock's holds excluded what was taken under them
// (docs/RULES.md R24). It reports whether Take had taken the lock
// out of gates, which the caller puts back.
func (g *gate) Show() (taken bool) {
	return g.update(func(v uint32) uint32 { return (v | gateShown) &^ gateTaken })&gateTaken != 0
}

// Shown reports whether Show was called.
func (g *gate) Shown() bool { return g.v.Load()&gateShown != 0 }

// Take records that R24 takes the lock out of gates, unless Show was
// called first or Take was already: it reports whether it did.
func (g *gate) Take() bool {
	return g.update(func(v uint32) uint32 {
		if v&(gateShown|gateTaken) != 0 {
			return v
		}
		return v | gateTaken
	})&(gateShown|gateTaken) == 0
}

// Untake undoes Take, the lock having changed hands unseen (a release
// outside check mode): it reports whether the lock was taken out of gates.
func (g *gate) Untake() bool {
	return g.update(func(v uint32) uint32 { return v &^ gateTaken })&gateTaken != 0
}

// Taken reports whether Take took the lock out of gates, and neither
// Show nor Untake came since.
func (g *gate) Taken() bool { return g.v.Load()&gateTaken != 0 }

// Bury records that a grave of an exited goroutine's write hold of the
// lock watches it (internal/held, for R24): a change of its holder must tell it
// (held.Unbury). It is undone by Unbury.
func (g *gate) Bury() { g.update(func(v uint32) uint32 { return v | gateBuried }) }

// Unbury undoes Bury.
func (g *gate) Unbury() { g.update(func(v uint32) uint32 { return v &^ gateBuried }) }

// Buried reports whether Bury was called, and Unbury not since.
func (g *gate) Buried() bool { return g.v.Load()&gateBuried != 0 }

// Watched reports, in one load, whether Taken or Buried: what a new
// holder of the lock must look at.
func (g *gate) Watched() bool { return g.v.Load()&(gateTaken|gateBuried) != 0 }

// MarkUnder records that an order edge was seen under a write hold of the
// lock: a hand-off of it then shows it to gate.
func (g *gate) MarkUnder() {
	if g.v.Load()&gateUnder == 0 {
		g.update(func(v uint32) uint32 { return v | gateUnder })
	}
}

// Under reports whether MarkUnder was called, or Take took the lock
// out of gates (a hand-off must then put it back).
func (g *gate) Under() bool { return g.v.Load()&(gateUnder|gateTaken) != 0 }
