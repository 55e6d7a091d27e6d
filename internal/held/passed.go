package held

// passedOnces remembers the last few Onces (by lock id) a goroutine saw
// done: a Do that returned, or ran the Once's function. It is bounded: a
// goroutine that uses more Onces forgets the oldest, and is from then on
// forgetful (see Forgetful): an edge recorded because a Once was forgotten
// would be a false report, so a forgetful goroutine records none
// (docs/RULES.md R16).
type passedOnces struct {
	ids  [8]uint64
	next uint8
}

// PassOnce records that the goroutine has seen the Once whose identity
// has id done, and reports whether it had seen that before: then every
// later Do of that Once by the goroutine is ordered after the Once's
// completion by the goroutine's own program order, and cannot wait in
// any run that takes the same path. Only the owner calls it.
func (g *G) PassOnce(id uint64) bool {
	p := &g.passed
	for _, x := range p.ids {
		if x == id {
			return true
		}
	}
	if p.ids[p.next] != 0 {
		g.forgetful = true // the oldest is forgotten
	}
	p.ids[p.next] = id
	p.next = (p.next + 1) % uint8(len(p.ids))
	return false
}
