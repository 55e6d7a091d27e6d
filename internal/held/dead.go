package held

// DeadHold is a lock still held by a goroutine that has exited.
type DeadHold struct {
	Goroutine int64
	Entry     Entry
}

// DeadHolds returns the locks still held by the goroutines of states (all
// the states there are: internal/gls's States) that exited reports have
// exited. The caller must ask
// exited only of what it saw after States returned (a goroutine dump
// taken then): a goroutine that has a state existed before.
func DeadHolds(states []*G, exited func(id int64) bool) []DeadHold {
	var out []DeadHold
	for _, g := range states {
		id := g.ID()
		if !exited(id) {
			continue
		}
		for _, e := range entriesOfExited(g) {
			if e.Lock != nil && g.Valid(&e) {
				out = append(out, DeadHold{Goroutine: id, Entry: e})
			}
		}
	}
	return out
}

// entriesOfExited copies the stack of g, whose goroutine has exited. Its
// last writes came before its exit, which nothing orders before this read
// as far as the race detector can see: the goroutine is gone, so no write
// can come after, and the read is kept out of the detector's sight.
//
//go:norace
func entriesOfExited(g *G) []Entry {
	out := make([]Entry, len(g.stack))
	copy(out, g.stack)
	return out
}
