package barrier

import (
	"time"

	"github.com/syncwatch/syncwatch/internal/registry"
)

// Status is a barrier's state at one instant, as a debugging page shows
// it: which generation is open, who has arrived for it, and who is
// missing and why.
type Status struct {
	// Name and Parties are the barrier's.
	Name    string
	Parties int
	// Generation is the generation the barrier is waiting for now.
	Generation uint64
	// Arrived lists the ranks waiting for it, in arrival order, and
	// Waiting is how long ago the first of them arrived (0 if none has).
	Arrived []int
	Waiting time.Duration
	// MissingCount is how many participating ranks have not arrived.
	// Missing says, once a rank has arrived, why they are missing (at
	// most [MaxExplained] of them, those whose goroutine is known first).
	// It is empty while nobody waits.
	MissingCount int
	Missing      []MissingRank
	// Left lists the ranks that left the barrier.
	Left []int
	// Last is the latest finished generation, if the barrier remembers
	// one (see [WithHistory]).
	Last *Record
}

// Status returns the barrier's state now. It takes the barrier's lock
// briefly and reads syncwatch's waits registry to explain the missing
// ranks.
func (b *Barrier) Status() Status {
	b.mustInit()
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.cur
	missing, left, never := b.absentLocked(g)
	s := Status{
		Name:         b.cfg.name,
		Parties:      b.parties,
		Generation:   g.num,
		Arrived:      g.ranks(),
		MissingCount: len(missing),
		Left:         left,
	}
	if len(g.arrivals) > 0 {
		s.Waiting = time.Since(g.start())
		s.Missing = b.whyLocked(g, missing, never)
	}
	if recs := b.hist.snapshot(); len(recs) > 0 {
		last := recs[len(recs)-1].clone()
		s.Last = &last
	}
	return s
}

// view is what debughttp's page shows of the barrier (see
// internal/registry).
func (b *Barrier) view() registry.Barrier {
	s := b.Status()
	x := registry.Barrier{Name: s.Name, Parties: s.Parties, Generation: s.Generation, Arrived: s.Arrived, Left: s.Left}
	if len(s.Arrived) > 0 {
		x.Waiting = registry.Ago(s.Waiting)
	}
	for _, m := range s.Missing {
		x.Missing = append(x.Missing, registry.MissingRank{Rank: m.Rank, Goroutine: m.Goroutine, Why: m.Reason})
	}
	if s.Last != nil {
		x.Last = s.Last.String()
	}
	return x
}
