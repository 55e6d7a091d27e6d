package waitfor

import "github.com/syncwatch/syncwatch/internal/goid"

// Stuck reports whether w can end only by goroutines that cannot act now:
// following the goroutines it needs (Blockers) through their own syncwatch
// waits, none it reaches is awake (running, runnable, asleep, in a system
// call: not blocked by StateBlocked) in d, and none of those waits ends by
// itself. A goroutine that has exited cannot act, nor can the caller (it
// is checking, as the program ends); a cycle of waits is stuck. A wait whose blockers are unknown (any goroutine could end it) is
// stuck only if no goroutine of d but the caller is awake and no wait of g
// ends by itself.
func (g *Graph) Stuck(w *Wait, d *Dump) bool {
	self := goid.ID()
	seen := make(map[int64]bool)
	var stuck func(w *Wait) bool
	stuck = func(w *Wait) bool {
		if w.Bounded {
			return false
		}
		if seen[w.Goroutine] {
			return true // a cycle of waits
		}
		seen[w.Goroutine] = true
		ids := g.Blockers(w)
		if ids == nil {
			all, _, _ := blockedBut(d, g)
			return all
		}
		for _, id := range ids {
			if id == self {
				continue
			}
			if next := g.waits[id]; next != nil && d.Alive(id) {
				if !stuck(next) {
					return false
				}
				continue
			}
			if r, ok := d.Routine(id); ok && !StateBlocked(r.State) {
				return false
			}
		}
		return true
	}
	return stuck(w)
}
