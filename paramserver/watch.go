package paramserver

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// WaitVersion waits until the server reaches version v and returns the
// current snapshot (whose version may be past v). It returns at once if v
// is reached already, even if ctx is done.
//
// The wait is bounded by ctx and by the server's max wait
// ([WithMaxWait]); if either ends it first, WaitVersion returns a
// *[WaitError] (matching [ErrWaitTimeout] for a timeout). While it waits,
// the wait is registered with syncwatch's waits registry (kind "version").
// A nil ctx panics.
func (s *Server) WaitVersion(ctx context.Context, v uint64) (Snapshot, error) {
	if ctx == nil {
		panic("paramserver: WaitVersion with nil Context")
	}
	st, err := s.await(ctx, v)
	if err != nil {
		return Snapshot{}, err
	}
	return st.snap, nil
}

// Watch returns an iterator over every version from from onward, in
// order, with no gap: the way an etcd watcher receives every revision. It
// waits for versions not yet published, each wait bounded as in
// [Server.WaitVersion].
//
// The sequence ends, after yielding a final non-nil error, when ctx ends
// or a wait times out (*[WaitError]) or when a version it needs is no
// longer kept (*[HistoryError], see [WithHistory]); it never skips a
// version. It also ends when the consumer breaks out of the loop. Watch
// starts no goroutine: nothing is left behind either way. A nil ctx
// panics.
func (s *Server) Watch(ctx context.Context, from uint64) iter.Seq2[Snapshot, error] {
	if ctx == nil {
		panic("paramserver: Watch with nil Context")
	}
	return func(yield func(Snapshot, error) bool) {
		for v := from; ; v++ {
			var st *state
			err := ctx.Err()
			if err != nil {
				err = &WaitError{Want: v, Have: s.Version(), Err: err}
			} else if st, err = s.await(ctx, v); err == nil {
				st, err = s.at(v)
			}
			if err != nil {
				yield(Snapshot{}, err)
				return
			}
			if !yield(st.snap, nil) {
				return
			}
		}
	}
}

// at returns version v, which has been published, from the history.
func (s *Server) at(v uint64) (*state, error) {
	n := uint64(len(s.hist))
	if st := s.hist[v%n].Load(); st != nil && st.snap.Version == v {
		return st, nil
	}
	cur := s.cur.Load().snap.Version
	oldest := uint64(0)
	if cur >= n {
		oldest = cur - n + 1
	}
	return nil, &HistoryError{Want: v, Oldest: oldest}
}

// await waits, bounded, until the current version is at least v, and
// returns the current state.
func (s *Server) await(ctx context.Context, v uint64) (*state, error) {
	st := s.cur.Load()
	if st.snap.Version >= v {
		return st, nil
	}
	start := time.Now()
	gid := goid.ID()
	w := waitfor.Begin(&waitfor.Wait{
		Goroutine: gid,
		Kind:      waitfor.KindWatch,
		Object:    s.name,
		ObjectID:  s.id,
		Detail:    fmt.Sprintf("waits for version %d, at version %d", v, st.snap.Version),
		Bounded:   true,
	})
	defer waitfor.End(w)
	timer := time.NewTimer(s.cfg.maxWait)
	defer timer.Stop()
	for {
		var cause error
		select {
		case <-st.successor():
		case <-ctx.Done():
			cause = ctx.Err()
		case <-timer.C:
			cause = context.DeadlineExceeded
		}
		st = s.cur.Load()
		if st.snap.Version >= v {
			return st, nil
		}
		if cause != nil {
			return nil, &WaitError{Want: v, Have: st.snap.Version, Waited: time.Since(start), Err: cause}
		}
	}
}
