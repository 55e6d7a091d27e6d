package held

// DeadHold is a lock still held by a goroutine that has exited.
type DeadHold struct {
	Goroutine int64
	Entry     Entry
}

// DeadHolds returns the locks still held by goroutines that have exited:
// those for which alive reports false. A dead goroutine's stack is no
// longer written, so reading it here is safe; the race detector, which
// cannot know that the goroutine is gone, is told not to look.
func DeadHolds(alive func(id int64) bool) []DeadHold {
	var out []DeadHold
	visit := func(id int64, g *G) {
		if g == nil || alive(id) || g.ID() != id {
			return
		}
		raceDisable()
		defer raceEnable()
		for i := range g.stack {
			if e := &g.stack[i]; e.Lock != nil && g.Valid(e) {
				out = append(out, DeadHold{Goroutine: id, Entry: *e})
			}
		}
	}
	for i := range table {
		s := &table[i]
		if id := s.owner.Load(); id != 0 {
			visit(id, s.g.Load())
		}
	}
	slowMu.Lock()
	var over []*G
	for _, g := range overflow {
		over = append(over, g)
	}
	slowMu.Unlock()
	for _, g := range over {
		visit(g.ID(), g)
	}
	return out
}
