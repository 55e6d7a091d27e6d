package paramserver

import (
	"context"

	"github.com/syncwatch/syncwatch/staleness"
)

// outcome is what an Apply came to.
type outcome struct {
	version   uint64
	staleness uint64
	err       error // *staleness.StaleError, *ShapeError or *NonFiniteError
}

// Apply applies grad, computed on version base, on behalf of worker.
//
// The staleness bound is checked against the version current when the
// update is published, inside the critical section that publishes it, so
// no gradient staler than the bound is ever applied. A gradient that is
// too stale, or computed on a version the server has not reached, is
// rejected with a *staleness.StaleError (matching staleness.ErrTooStale or
// staleness.ErrFutureVersion) and changes nothing. So does a gradient that
// does not fit the parameters: *[ShapeError]; and a gradient that holds a
// NaN or an infinity, or whose update would make one: *[NonFiniteError].
// A gradient may name a subset of the parameters (a sparse update); it
// updates only those.
//
// On success Apply returns the new version: the version it produced, or in
// aggregation mode ([WithAggregation]) the version that will include it,
// once its round completes (wait for it with [Server.WaitVersion]).
//
// If ctx is already done Apply returns ctx.Err() and does nothing; ctx is
// otherwise used for the spans of a rejection. Apply may wait for the
// locks of the shards grad touches without a bound: they are held only
// while an update is computed and published. grad is read during the call
// only and must not be modified until it returns. A worker out of range or
// a nil ctx panics.
//
// Every rejection is counted in [Server.Stats] and in metrics, traced as a
// "paramserver.Apply" span with status Error, and reported to lockorder
// (see the package documentation for which reports are expected).
func (s *Server) Apply(ctx context.Context, worker int, grad Params, base uint64) (uint64, error) {
	if ctx == nil {
		panic("paramserver: Apply with nil Context")
	}
	ws := s.worker(worker)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	mask, err := s.layout.check(grad)
	if err == nil {
		err = checkFinite(grad, NonFiniteGradient)
	}
	var o outcome
	switch {
	case err != nil:
		o.err = err
	case s.cfg.aggregate > 0:
		o = s.applyRound(grad, base)
	default:
		o = s.applyOne(grad, base, mask)
	}
	if o.err != nil {
		s.rejected(ctx, worker, ws, base, o.err)
		return 0, o.err
	}
	s.accepted(ctx, ws, o.staleness)
	return o.version, nil
}

// applyOne applies one gradient as one version.
func (s *Server) applyOne(grad Params, base uint64, mask uint64) outcome {
	// The version only grows, so a gradient too stale now is too stale
	// at publication: reject it before taking any lock.
	if err := s.policy.Check(s.cur.Load().snap.Version, base); err != nil {
		return outcome{err: err}
	}
	s.lockShards(mask)
	defer s.unlockShards(mask)
	// Only holders of a shard's lock replace its tensors, so the current
	// version's tensors for grad's keys stay the latest until we unlock.
	fresh, err := s.step(s.cur.Load().snap.Params, grad)
	if err != nil {
		return outcome{err: err}
	}

	s.commit.Lock()
	defer s.commit.Unlock()
	latest := s.cur.Load()
	v := latest.snap.Version
	if err := s.policy.Check(v, base); err != nil {
		return outcome{err: err}
	}
	s.publish(latest, fresh)
	return outcome{version: v + 1, staleness: v - base}
}

// step computes the new tensors for grad's keys from params, without
// modifying params: the default SGD step, or the WithUpdate function on
// fresh copies. It returns a *NonFiniteError if a new value is not
// finite: the server never publishes one.
func (s *Server) step(params, grad Params) (Params, error) {
	fresh := make(Params, len(grad))
	if s.cfg.update != nil {
		for k := range grad {
			fresh[k] = append([]float32(nil), params[k]...)
		}
		s.cfg.update(fresh, grad)
		if !same(fresh, grad) {
			panic("paramserver: the WithUpdate function changed the keys or lengths of params")
		}
	} else {
		lr := s.cfg.lr
		for k, g := range grad {
			old := params[k]
			n := make([]float32, len(old))
			for i := range n {
				n[i] = old[i] - lr*g[i]
			}
			fresh[k] = n
		}
	}
	if err := checkFinite(fresh, NonFiniteUpdate); err != nil {
		return nil, err
	}
	return fresh, nil
}

// Policy returns the staleness policy the server applies.
func (s *Server) Policy() staleness.Policy { return s.policy }
