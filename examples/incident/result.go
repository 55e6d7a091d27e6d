package main

import (
	"time"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

// Result is what a run observed. Every field is filled from what the
// syncwatch primitives reported or returned during the run.
type Result struct {
	Fixed bool
	// Violations counts the distinct violations lockorder's handler
	// received, by kind; Unexpected counts those not marked Expected.
	Violations map[lockorder.Kind]int
	Unexpected int
	// Cycle lists the locks of the first lock-order cycle reported, and
	// BlockedAtCycle how many goroutines were blocked on a lock then.
	Cycle          []string
	BlockedAtCycle int
	// Stale lists the late gradients and what became of them.
	Stale []StaleEvent
	// Broken is the all-reduce generation that broke, if one did, with
	// its missing ranks and why each is missing (MissingRank.String).
	Broken  *barrier.BrokenError
	Missing []int
	Why     []string
	// BlockedAtSlow is how many goroutines were blocked on a lock when
	// the barrier's early warning was made (-1 if it was not).
	BlockedAtSlow int
	// Recovered is set when every rank completed the generation after the
	// break.
	Recovered bool
	// Losses is the global loss at each step, FinalLoss the loss of the
	// final parameters over all the data.
	Losses    []float64
	FinalLoss float64
	// FinalVersion is the parameter server's version at the end.
	// VersionsChecked is set when a paramserver.Watch from version 0 ran;
	// VersionsContiguous when it saw every version in order, up to the
	// final one, with no gap.
	FinalVersion       uint64
	VersionsChecked    bool
	VersionsContiguous bool
	// Catches is the summary table, one row per incident symptom.
	Catches []Catch
	Elapsed time.Duration
	Files   Files
}

// StaleEvent is a late gradient: computed on version Base, checked at
// version Current.
type StaleEvent struct {
	Elapsed        time.Duration
	Worker         int
	Base, Current  uint64
	Staleness, Max uint64
	Accepted       bool
}

// result gathers what the run observed.
func (s *sim) result(w watchResult) Result {
	params, version := s.ps.final()
	s.mu.Lock()
	defer s.mu.Unlock()
	res := Result{
		Fixed:              s.cfg.Fixed,
		Violations:         map[lockorder.Kind]int{},
		Stale:              s.stale,
		Broken:             s.broken,
		Recovered:          s.recovered,
		Losses:             s.losses,
		VersionsChecked:    w.checked,
		VersionsContiguous: w.contiguous,
		BlockedAtSlow:      -1,
	}
	for _, sv := range s.violations {
		res.Violations[sv.v.Kind]++
		if !sv.v.Expected {
			res.Unexpected++
		}
		if sv.v.Kind == lockorder.KindCycle && res.Cycle == nil {
			for _, e := range sv.v.Cycle {
				res.Cycle = append(res.Cycle, e.From)
			}
			res.BlockedAtCycle = sv.blocked
		}
		if sv.v.Kind == barrier.KindSlow && res.BlockedAtSlow < 0 {
			res.BlockedAtSlow = sv.blocked
		}
	}
	if s.broken != nil {
		res.Missing = s.broken.Missing
		for _, m := range s.broken.Why {
			res.Why = append(res.Why, m.String())
		}
	}
	res.FinalVersion = version
	res.FinalLoss = meanLoss(s.shards, params)
	res.Catches = s.catches(res)
	return res
}
