package main

// schedule fixes what, in production, depended on load: who reaches the
// barrier last, whose gradients are late, and when. It makes the replay
// deterministic; the code each worker runs is the same in every step.
type schedule struct {
	// steps is the number of training steps of phase 1.
	steps int
	// reducer is the rank that reads the reduced gradients and updates
	// the parameter server. In phase 1 it reaches the barrier last (it
	// also writes checkpoints), which is why the inversion never bit in
	// production: nobody was in submit_gradients by then.
	reducer int
	// straggler is the rank whose data loader stalls in phase 2, so that
	// it reaches submit_gradients after the reducer is at the barrier.
	straggler int
	// laggards push, besides their share of the all-reduce, a gradient of
	// an extra local batch straight to the parameter server (the
	// incident's apply_gradient path). Theirs are slow: computed at one
	// step, pushed at a later one.
	laggards []laggard
}

// laggard is a worker whose extra gradient is computed on the parameters of
// step computed and pushed at step pushed, pushed-computed versions later.
type laggard struct {
	worker           int
	computed, pushed int
}

// incidentSchedule replays IR-2024-0319-001: workers 23, 17 and 9 push
// gradients 15, 12 and 18 versions old, as in the incident's log, and
// worker 5 one exactly at the bound of 10. One version is published per
// step until worker 5's gradient, so the staleness of each is exact.
var incidentSchedule = schedule{
	steps:     24,
	reducer:   3,
	straggler: 17,
	laggards: []laggard{
		{worker: 23, computed: 1, pushed: 16},
		{worker: 17, computed: 5, pushed: 17},
		{worker: 9, computed: 0, pushed: 18},
		{worker: 5, computed: 9, pushed: 19},
	},
}

// laggard returns rank's entry, if it is a laggard.
func (s schedule) laggard(rank int) (laggard, bool) {
	for _, l := range s.laggards {
		if l.worker == rank {
			return l, true
		}
	}
	return laggard{}, false
}
