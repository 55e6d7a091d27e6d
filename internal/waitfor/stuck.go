package waitfor

import (
	"strings"

	"github.com/syncwatch/syncwatch/internal/goid"
)

// Stuckness returns a test, for the waits of g as d shows their
// goroutines, of whether a wait can end only by goroutines that cannot act
// now (RULES.md W7). A wait needs every goroutine of its Blockers to act,
// so it is stuck as soon as one of them cannot: one that has exited, the
// caller (it is checking, as the program ends), one blocked outside
// syncwatch (StateBlocked), or one whose own syncwatch wait is stuck; a
// cycle of waits is stuck, and a wait that ends by itself (Bounded) is
// not. A wait whose blockers are unknown (any goroutine could end it) is
// stuck only if no goroutine outside g's waits and syncwatch's own is
// awake (running, runnable, asleep; one in a system call, such as
// os/signal's, counts as blocked). The test remembers what it found, so
// one pass over g costs one walk of each chain.
func (g *Graph) Stuckness(d *Dump) func(*Wait) bool {
	self := goid.ID()
	memo := make(map[int64]bool)
	awake, looked := false, false
	anyAwake := func() bool {
		if !looked {
			awake, looked = g.othersAwake(d, self), true
		}
		return awake
	}
	var stuck func(w *Wait) bool
	stuck = func(w *Wait) bool {
		if w.Bounded {
			return false
		}
		if v, ok := memo[w.Goroutine]; ok {
			return v
		}
		memo[w.Goroutine] = true // met again on its own chain: a cycle
		v := g.blockedBy(w, d, self, stuck, anyAwake)
		memo[w.Goroutine] = v
		return v
	}
	return stuck
}

// blockedBy reports whether one of the goroutines w needs cannot act (see
// Stuckness).
func (g *Graph) blockedBy(w *Wait, d *Dump, self int64, stuck func(*Wait) bool, anyAwake func() bool) bool {
	ids := g.Blockers(w)
	if ids == nil {
		return !anyAwake()
	}
	for _, id := range ids {
		if id == self {
			return true
		}
		if next := g.waits[id]; next != nil && d.Alive(id) {
			if stuck(next) {
				return true
			}
			continue
		}
		if r, ok := d.Routine(id); !ok || StateBlocked(r.State) {
			return true // exited, or blocked outside syncwatch
		}
	}
	return false
}

// othersAwake reports whether a goroutine of d other than self, the
// waiters of g and syncwatch's own is awake: not blocked (StateBlocked)
// and not in a system call.
func (g *Graph) othersAwake(d *Dump, self int64) bool {
	for id, state := range d.States() {
		if id == self || g.waits[id] != nil || StateBlocked(state) {
			continue
		}
		if s, _, _ := strings.Cut(state, ", "); s == "syscall" {
			continue
		}
		if t := d.text(id); strings.Contains(t, deliverFunc) || strings.Contains(t, trimFunc) || strings.Contains(t, fenceFunc) {
			continue // syncwatch's own: it ends, and wakes nobody
		}
		return true
	}
	return false
}

// fenceFunc names, in a goroutine dump, the goroutine that registers the
// process for the kernel's memory barrier (internal/gls).
const fenceFunc = "internal/gls.startMembarrier."
