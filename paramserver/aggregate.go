package paramserver

// round is the aggregation round in progress: the gradients collected on
// one version, summed. Guarded by the server's commit lock.
type round struct {
	n   int
	sum Params
}

// applyRound adds grad to the current round, and when it is the k-th,
// applies the round's average as one version. It holds every shard lock
// and the commit lock: rounds are synchronous by nature.
func (s *Server) applyRound(grad Params, base uint64) outcome {
	s.lockShards(s.all)
	defer s.unlockShards(s.all)
	s.commit.Lock()
	defer s.commit.Unlock()
	cur := s.cur.Load()
	v := cur.snap.Version
	if err := s.policy.Check(v, base); err != nil {
		return outcome{err: err}
	}
	r := &s.round
	if r.n+1 < s.cfg.aggregate {
		if err := checkSum(r.sum, grad); err != nil {
			return outcome{err: err} // the round stays finite
		}
		if r.sum == nil {
			r.sum = make(Params, len(grad))
		}
		for k, g := range grad {
			acc := r.sum[k]
			if acc == nil {
				acc = make([]float32, len(g))
				r.sum[k] = acc
			}
			for i, x := range g {
				acc[i] += x
			}
		}
		r.n++
		s.pending.Store(int64(r.n))
		return outcome{version: v + 1}
	}
	// The round is complete. Average into new tensors, leaving r as it
	// is until the update has succeeded: if it panics, or would make a
	// non-finite value, the round stays as it was, without this gradient.
	k := float32(s.cfg.aggregate)
	avg := make(Params, len(r.sum)+len(grad))
	for key, acc := range r.sum {
		avg[key] = append([]float32(nil), acc...)
	}
	for key, g := range grad {
		a := avg[key]
		if a == nil {
			a = make([]float32, len(g))
			avg[key] = a
		}
		for i, x := range g {
			a[i] += x
		}
	}
	for _, a := range avg {
		for i := range a {
			a[i] /= k
		}
	}
	if err := checkFinite(avg, NonFiniteUpdate); err != nil {
		return outcome{err: err}
	}
	fresh, err := s.step(cur.snap.Params, avg)
	if err != nil {
		return outcome{err: err}
	}
	s.publish(cur, fresh)
	*r = round{}
	s.pending.Store(0)
	return outcome{version: v + 1}
}
