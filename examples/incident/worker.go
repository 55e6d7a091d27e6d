package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

// worker is one rank's state across steps.
type worker struct {
	rank int
	// gen is the barrier generation the rank's next Await is for: every
	// rank calls Await the same number of times, so they all agree.
	gen uint64
	// extra is a laggard's slow gradient and the version it was computed on.
	extra     []float64
	extraBase uint64
}

// train runs rank through phase 1 and phase 2. Each step is:
//
//	read the parameters from the parameter server
//	compute the gradient of the rank's shard
//	all-reduce: submit_gradients, then wait at the barrier (the reducer
//	  waits inside get_reduced_gradients and reads the mean)
//	the reducer applies the mean to the parameter server
//	end-of-step barrier: nobody starts the next step before the update
func (s *sim) train(ctx context.Context, rank int) error {
	w := &worker{rank: rank}
	for step := range s.sched.steps {
		if err := s.step(ctx, w, step, false); err != nil {
			return fmt.Errorf("rank %d, step %d: %w", rank, step, err)
		}
	}
	if rank == s.sched.reducer {
		s.log.printf("\nphase 2: the 14:12 schedule. Rank %d's data loader stalls: it reaches submit_gradients\n"+
			"after rank %d is already waiting at the barrier.\n", s.sched.straggler, s.sched.reducer)
	}
	if err := s.step(ctx, w, s.sched.steps, true); err != nil {
		return fmt.Errorf("rank %d, phase 2: %w", rank, err)
	}
	return nil
}

func (s *sim) step(ctx context.Context, w *worker, step int, phase2 bool) error {
	params, version := s.ps.getParameters(w.rank)
	if err := s.pushExtra(ctx, w, step, params, version); err != nil {
		return err
	}
	grad := s.shards[w.rank].gradient(params)

	if phase2 && w.rank == s.sched.straggler {
		// The stall: everyone else, the reducer included, is at the barrier.
		if err := s.waitArrivals(ctx, w.gen, s.parties-1); err != nil {
			return err
		}
	}
	s.coord.submitGradients(w.rank, grad)

	var err error
	if w.rank == s.sched.reducer {
		others := s.parties - 1 // phase 1: the reducer comes last
		if phase2 {
			others = s.parties - 2 // phase 2: before the straggler
		}
		if err := s.waitArrivals(ctx, w.gen, others); err != nil {
			return err
		}
		var mean []float64
		mean, err = s.coord.getReducedGradients(ctx, w.rank)
		if err == nil {
			s.recordLoss(step, version, lossOf(mean))
			if _, err := s.ps.applyGradient(ctx, w.rank, asParams(mean), version); err != nil {
				return fmt.Errorf("applying the reduced gradients: %w", err)
			}
		}
	} else {
		_, err = s.barrier.Await(ctx, w.rank)
	}
	w.gen++
	var be *barrier.BrokenError
	if err != nil && !(phase2 && errors.As(err, &be)) {
		return err
	}
	if be != nil {
		s.recordBroken(be)
	}

	// End of step. After a broken all-reduce it is the recovery: it
	// completes only if every rank, the straggler included, got free.
	gen, endErr := s.barrier.Await(ctx, w.rank)
	w.gen++
	if endErr != nil {
		return fmt.Errorf("end of step: %w", endErr)
	}
	if be != nil && w.rank == s.sched.reducer {
		s.coord.reset()
		s.recordRecovery(gen)
	}
	return nil
}

// pushExtra is a laggard's slow gradient: computed on the parameters of
// one step, pushed straight to the parameter server at a later one.
func (s *sim) pushExtra(ctx context.Context, w *worker, step int, params paramserver.Params, version uint64) error {
	l, ok := s.sched.laggard(w.rank)
	if !ok {
		return nil
	}
	switch step {
	case l.computed:
		w.extra, w.extraBase = s.shards[w.rank].gradient(params), version
	case l.pushed:
		v, err := s.ps.applyGradient(ctx, w.rank, asParams(w.extra), w.extraBase)
		var se *staleness.StaleError
		switch {
		case errors.As(err, &se) && !se.Future():
			s.recordStale(StaleEvent{Worker: w.rank, Base: w.extraBase, Current: se.Current, Staleness: se.Staleness, Max: se.Max})
		case err != nil:
			return fmt.Errorf("pushing a late gradient: %w", err)
		default:
			s.recordStale(StaleEvent{Worker: w.rank, Base: w.extraBase, Current: v - 1, Staleness: v - 1 - w.extraBase,
				Max: s.maxStaleness, Accepted: true})
		}
	}
	return nil
}

// waitArrivals waits until n ranks have arrived for generation gen, or gen
// is over. It is how the replay fixes who comes last; it is bounded by ctx.
func (s *sim) waitArrivals(ctx context.Context, gen uint64, n int) error {
	for {
		g, arrived := s.barrier.Current()
		if g != gen || len(arrived) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d ranks at generation %d: %w", n, gen, ctx.Err())
		case <-time.After(50 * time.Microsecond):
		}
	}
}
