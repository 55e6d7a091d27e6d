package barrier

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Arrival is one rank's arrival for a generation.
type Arrival struct {
	// Rank is the rank that arrived, at At, in goroutine Goroutine (the
	// one that called Await).
	Rank      int
	Goroutine int64
	At        time.Time
	// Op is the operation the arrival was labelled with (see [Op]), if
	// any.
	Op string
}

// Record is what the flight recorder keeps about one finished generation,
// as NCCL's flight recorder does about a collective: who arrived when, who
// was last, and, for a broken generation, who never came.
type Record struct {
	// Generation is the generation recorded.
	Generation uint64
	// Start is the first arrival, End the completion or the break. Start
	// is zero for a generation broken (by Abort) before anyone arrived.
	Start, End time.Time
	// Arrivals lists the arrivals in order.
	Arrivals []Arrival
	// Straggler is the rank whose arrival completed the generation, and
	// Lag how long after the first arrival it came. Straggler is -1 for a
	// broken generation.
	Straggler int
	Lag       time.Duration
	// Broken is set for a generation that broke; Missing lists the ranks
	// it waited for in vain and Cause why it broke.
	Broken  bool
	Missing []int
	Cause   error
}

// String describes r in one line.
func (r Record) String() string {
	if r.Broken {
		return fmt.Sprintf("generation %d: broken after %v, %d arrived, missing %s: %v",
			r.Generation, r.End.Sub(r.startOrEnd()).Round(time.Microsecond), len(r.Arrivals), rankList(r.Missing), r.Cause)
	}
	return fmt.Sprintf("generation %d: completed, straggler rank %d (+%v)",
		r.Generation, r.Straggler, r.Lag.Round(time.Microsecond))
}

func (r Record) startOrEnd() time.Time {
	if r.Start.IsZero() {
		return r.End
	}
	return r.Start
}

// order returns "rank@offset ..." for r's arrivals: all of them, or the
// first and last maxListed/2 with the number left out between.
func (r Record) order() string {
	var b strings.Builder
	write := func(as []Arrival) {
		for _, a := range as {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%d@+%v", a.Rank, a.At.Sub(r.Start).Round(time.Microsecond))
		}
	}
	if n := len(r.Arrivals); n > maxListed {
		write(r.Arrivals[:maxListed/2])
		fmt.Fprintf(&b, " ... %d more ...", n-maxListed)
		write(r.Arrivals[n-maxListed/2:])
		return b.String()
	}
	write(r.Arrivals)
	return b.String()
}

// clone returns r with its own slices.
func (r Record) clone() Record {
	r.Arrivals = slices.Clone(r.Arrivals)
	r.Missing = slices.Clone(r.Missing)
	return r
}

// formatHistory renders recs for a report, oldest first, with the arrival
// order of the last one.
func formatHistory(recs []Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "flight recorder, last %d generations:\n", len(recs))
	for _, r := range recs {
		fmt.Fprintf(&b, "  %s\n", r)
	}
	last := recs[len(recs)-1]
	if len(last.Arrivals) > 0 {
		fmt.Fprintf(&b, "arrivals of generation %d (rank@offset): %s\n", last.Generation, last.order())
	}
	return b.String()
}

// history is a ring of the last records. Records are immutable once added,
// so snapshots share them.
type history struct {
	recs []Record
	next int
	full bool
}

func newHistory(k int) history { return history{recs: make([]Record, k)} }

func (h *history) add(r Record) {
	if len(h.recs) == 0 {
		return
	}
	h.recs[h.next] = r
	h.next++
	if h.next == len(h.recs) {
		h.next, h.full = 0, true
	}
}

// snapshot returns the records, oldest first, sharing their slices.
func (h *history) snapshot() []Record {
	if !h.full {
		return slices.Clone(h.recs[:h.next])
	}
	out := make([]Record, 0, len(h.recs))
	out = append(out, h.recs[h.next:]...)
	return append(out, h.recs[:h.next]...)
}

// History returns what the barrier remembers of its last generations (see
// [WithHistory]), oldest first. The records are copies.
func (b *Barrier) History() []Record {
	b.mustInit()
	b.mu.Lock()
	recs := b.hist.snapshot()
	b.mu.Unlock()
	for i := range recs {
		recs[i] = recs[i].clone()
	}
	return recs
}
