package main

import (
	"context"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

// coordinator is the all-reduce: every rank submits its gradient, and the
// reducer, once all have, reads their mean.
type coordinator interface {
	// submitGradients adds rank's gradient to the current round.
	submitGradients(rank int, grad []float64)
	// getReducedGradients waits at the barrier as rank until every rank
	// has submitted, then returns the mean and starts a new round.
	getReducedGradients(ctx context.Context, rank int) ([]float64, error)
	// reset drops a round that broke.
	reset()
}

// allReduceCoordinator is the state and the submit path of the incident's
// AllReduceCoordinator, the same in both designs: submit_gradients takes
// the worker lock, then the aggregation lock. Its locks are lockorder
// mutexes and its barrier a barrier.Barrier; nothing else changed.
type allReduceCoordinator struct {
	barrier         *barrier.Barrier
	workerLock      *lockorder.Mutex // guards submitted
	aggregationLock *lockorder.Mutex // guards sum
	submitted       map[int]bool
	sum             []float64
}

func newAllReduceCoordinator(b *barrier.Barrier) allReduceCoordinator {
	return allReduceCoordinator{
		barrier:         b,
		workerLock:      lockorder.NewMutex("worker_lock"),
		aggregationLock: lockorder.NewMutex("aggregation_lock"),
		submitted:       map[int]bool{},
		sum:             make([]float64, gradLen),
	}
}

// submitGradients: worker_lock, then aggregation_lock (path 1).
func (c *allReduceCoordinator) submitGradients(rank int, grad []float64) {
	c.workerLock.Lock()
	defer c.workerLock.Unlock()
	c.submitted[rank] = true
	c.aggregationLock.Lock()
	defer c.aggregationLock.Unlock()
	for i, g := range grad {
		c.sum[i] += g
	}
}

// takeMean returns the mean of the round and starts the next. The caller
// holds both locks.
func (c *allReduceCoordinator) takeMean() []float64 {
	out := make([]float64, len(c.sum))
	for i, s := range c.sum {
		out[i] = s / float64(max(1, len(c.submitted)))
	}
	clear(c.submitted)
	clear(c.sum)
	return out
}

func (c *allReduceCoordinator) reset() {
	c.workerLock.Lock()
	defer c.workerLock.Unlock()
	c.aggregationLock.Lock()
	defer c.aggregationLock.Unlock()
	c.takeMean()
}

// incidentCoordinator reads the reduced gradients as the incident did.
type incidentCoordinator struct{ allReduceCoordinator }

// getReducedGradients: aggregation_lock, the barrier, then worker_lock
// (path 2, the inversion). Holding the aggregation lock across the barrier
// was meant to keep a late gradient out of the mean; it keeps the late
// rank out of the barrier instead.
func (c *incidentCoordinator) getReducedGradients(ctx context.Context, rank int) ([]float64, error) {
	c.aggregationLock.Lock()
	defer c.aggregationLock.Unlock()
	if _, err := c.barrier.Await(ctx, rank); err != nil {
		return nil, err
	}
	c.workerLock.Lock()
	defer c.workerLock.Unlock()
	return c.takeMean(), nil
}

// fixedCoordinator is the corrected design: one lock order everywhere, and
// no lock held at the barrier.
type fixedCoordinator struct{ allReduceCoordinator }

// getReducedGradients waits at the barrier holding nothing, then takes the
// locks in submitGradients' order.
func (c *fixedCoordinator) getReducedGradients(ctx context.Context, rank int) ([]float64, error) {
	if _, err := c.barrier.Await(ctx, rank); err != nil {
		return nil, err
	}
	c.workerLock.Lock()
	defer c.workerLock.Unlock()
	c.aggregationLock.Lock()
	defer c.aggregationLock.Unlock()
	return c.takeMean(), nil
}
