package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

// parameterServer is what the workers need of a parameter server.
type parameterServer interface {
	// getParameters returns the parameters and the version they are.
	getParameters(rank int) (paramserver.Params, uint64)
	// applyGradient applies worker's gradient, computed on version base, and
	// returns the new version, or a *staleness.StaleError.
	applyGradient(ctx context.Context, worker int, grad paramserver.Params, base uint64) (uint64, error)
	// final reads the parameters once training is over, the right way.
	final() (paramserver.Params, uint64)
}

// incidentPS is the incident's ParameterServer, ported with its bug:
// get_parameters and apply_gradient take no lock, so a reader can pair one
// version's parameters with another's number, and two concurrent updates
// both publish the same next version (one update lost, a version skipped
// for readers).
//
// Its state is documented as guarded by lock, and the port says so in code
// with lock.AssertHeld: that is all lockorder needs to report the missing
// locking the first time it runs, long before two updates collide. The
// fields are atomics only so that Go's race detector stays quiet; as in the
// incident's Python, each access is atomic and the sequence is not.
//
// Its staleness check is staleness.Policy, in place of the incident's
// `if staleness > max + 1: log.warning(...)` (off by one, and it applied
// the gradient anyway). It still runs without the lock, so the version it
// checks is not necessarily the version it publishes over.
type incidentPS struct {
	lock    *lockorder.Mutex // "ps_lock": guards params and version. Never taken: the bug.
	policy  staleness.Policy
	params  atomic.Pointer[paramserver.Params]
	version atomic.Uint64
}

func newIncidentPS(initial paramserver.Params, maxStaleness uint64) *incidentPS {
	ps := &incidentPS{lock: lockorder.NewMutex("ps_lock"), policy: staleness.Policy{MaxStaleness: maxStaleness}}
	p := initial.Clone()
	ps.params.Store(&p)
	return ps
}

// getParameters is get_parameters.
func (ps *incidentPS) getParameters(int) (paramserver.Params, uint64) {
	ps.lock.AssertHeld() // the contract; the incident's code never took ps_lock
	p := ps.params.Load()
	v := ps.version.Load() // a second read: an update in between tears the pair
	return *p, v
}

// final reads the parameters holding ps_lock, as getParameters should.
func (ps *incidentPS) final() (paramserver.Params, uint64) {
	ps.lock.Lock()
	defer ps.lock.Unlock()
	return ps.getParameters(0)
}

// applyGradient is apply_gradient.
func (ps *incidentPS) applyGradient(ctx context.Context, worker int, grad paramserver.Params, base uint64) (uint64, error) {
	ps.lock.AssertHeld()
	current := ps.version.Load()
	if err := ps.policy.Check(current, base); err != nil {
		reportStale(ctx, worker, err)
		return current, err
	}
	next := sgdStep(*ps.params.Load(), grad)
	ps.params.Store(&next)
	ps.version.Store(current + 1) // not current+1 of whoever stored last
	return current + 1, nil
}

// reportStale hands a rejected gradient to lockorder's report pipeline,
// the way paramserver reports its own, so that the handler, the spans and
// lockorder.Violations see it. It is expected: rejecting is the check
// doing its job.
func reportStale(ctx context.Context, worker int, err error) {
	var se *staleness.StaleError
	if !errors.As(err, &se) {
		return
	}
	lockorder.ReportContext(ctx, lockorder.Violation{
		Kind:     paramserver.KindStaleRejected,
		Source:   "incident.ParameterServer",
		Message:  fmt.Sprintf("incident ParameterServer: worker %d: gradient staleness %d exceeds bound %d", worker, se.Staleness, se.Max),
		Expected: true,
		Err:      se,
	})
}

// lockedPS is the corrected parameter server: paramserver.Server, whose
// reads are one atomic snapshot and whose updates check the staleness bound
// and publish the next version in one critical section.
type lockedPS struct{ s *paramserver.Server }

func (ps lockedPS) getParameters(rank int) (paramserver.Params, uint64) {
	snap := ps.s.Get(rank)
	return snap.Params, snap.Version
}

func (ps lockedPS) applyGradient(ctx context.Context, worker int, grad paramserver.Params, base uint64) (uint64, error) {
	return ps.s.Apply(ctx, worker, grad, base)
}

func (ps lockedPS) final() (paramserver.Params, uint64) {
	snap := ps.s.Get(0)
	return snap.Params, snap.Version
}
