package paramserver

// maxExactBuckets bounds the exact buckets of a staleness histogram.
const maxExactBuckets = 64

// histogramBuckets returns the length of a staleness histogram for bound
// max: one bucket per staleness 0..max (at most maxExactBuckets), plus
// one for the rest.
func histogramBuckets(max uint64) int {
	return int(min(max, maxExactBuckets-1)) + 2
}

// Stats are a server's counters. Each counter is exact, but while Applies
// run, the counters are read one after the other, not at one instant.
type Stats struct {
	// Version is the current version.
	Version uint64
	// MaxStaleness is the staleness bound.
	MaxStaleness uint64
	// Pending is the number of gradients in the current aggregation
	// round (always 0 without WithAggregation).
	Pending int
	// Workers holds each worker's counters, indexed by worker: every
	// declared worker (see [WithWorkers]) or, if none were, every worker
	// up to the highest one that called the server, with zero counters
	// for the numbers no worker used.
	Workers []WorkerStats
}

// WorkerStats are the counters of one worker (or, from [Stats.Total], of
// all workers).
type WorkerStats struct {
	// Accepted counts the gradients applied (or, in aggregation mode,
	// added to a round).
	Accepted uint64
	// TooStale, FutureVersion, BadShape and NonFinite count the rejected
	// gradients by reason: staleness.ErrTooStale,
	// staleness.ErrFutureVersion, ErrShape, ErrNonFinite.
	TooStale, FutureVersion, BadShape, NonFinite uint64
	// Staleness is a histogram of the staleness of the gradients checked
	// against the bound (accepted and too stale): Staleness[s] counts
	// staleness s for s from 0 to min(MaxStaleness, 63), and the last
	// bucket counts the rest, which are the rejected ones when the bound
	// is below 64.
	Staleness []uint64
}

// Rejected returns the number of rejected gradients.
func (w WorkerStats) Rejected() uint64 {
	return w.TooStale + w.FutureVersion + w.BadShape + w.NonFinite
}

// Submitted returns the number of gradients submitted: accepted plus
// rejected.
func (w WorkerStats) Submitted() uint64 { return w.Accepted + w.Rejected() }

// Total returns the sum of every worker's counters.
func (s Stats) Total() WorkerStats {
	var t WorkerStats
	for _, w := range s.Workers {
		t.Accepted += w.Accepted
		t.TooStale += w.TooStale
		t.FutureVersion += w.FutureVersion
		t.BadShape += w.BadShape
		t.NonFinite += w.NonFinite
		if t.Staleness == nil {
			t.Staleness = make([]uint64, len(w.Staleness))
		}
		for i, n := range w.Staleness {
			t.Staleness[i] += n
		}
	}
	return t
}

// Stats returns the server's counters. It takes no lock.
func (s *Server) Stats() Stats {
	states := s.workerStates()
	st := Stats{
		Version:      s.Version(),
		MaxStaleness: s.cfg.maxStaleness,
		Pending:      int(s.pending.Load()),
		Workers:      make([]WorkerStats, len(states)),
	}
	buckets := histogramBuckets(s.cfg.maxStaleness)
	for i, w := range states {
		ws := WorkerStats{Staleness: make([]uint64, buckets)}
		if w != nil {
			ws.Accepted = w.accepted.Load()
			ws.TooStale = w.tooStale.Load()
			ws.FutureVersion = w.future.Load()
			ws.BadShape = w.shape.Load()
			ws.NonFinite = w.nonFinite.Load()
			for b := range w.staleness {
				ws.Staleness[b] = w.staleness[b].Load()
			}
		}
		st.Workers[i] = ws
	}
	return st
}
