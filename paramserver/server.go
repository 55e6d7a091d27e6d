package paramserver

import (
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/staleness"
)

// Snapshot is one version of the parameters. The server never modifies a
// Snapshot after returning it, and neither may the caller: Params shares
// its tensors with the server and with later snapshots (copy-on-write).
// Use Params.Clone for a copy to modify.
type Snapshot struct {
	// Version counts the updates applied since New: 0 is the initial
	// parameters, and each accepted update (or aggregation round) adds 1.
	Version uint64
	Params  Params
}

// A Server is a parameter server: it holds versioned parameters, hands
// them to workers, and applies their gradients under a staleness bound.
//
// Readers never lock: [Server.Get] is one atomic load of an immutable
// [Snapshot]. Writers ([Server.Apply]) lock the shards of the parameters
// they touch, in one canonical order, so that gradients touching disjoint
// parameters are computed in parallel; publishing a version is a short
// critical section of its own. All methods are safe for concurrent use.
//
// Create servers with [New]; the zero Server is not usable. A Server must
// not be copied.
type Server struct {
	name   string
	id     uint64
	cfg    config
	policy staleness.Policy
	layout *layout
	all    uint64 // mask of every shard

	// shards[i] guards the tensors of shard i against concurrent
	// updates; commit serializes publication. Order: shards by index,
	// then commit.
	shards []*lockorder.Mutex
	commit *lockorder.Mutex

	cur     atomic.Pointer[state]
	hist    []atomic.Pointer[state] // hist[v % len] is version v, if kept
	round   round                   // guarded by commit; aggregation only
	pending atomic.Int64            // gradients in round, for Stats

	workers workerTable
	tel     telemetry
}

// state is one published version. It is immutable except for next: the
// channel closed when the following version is published, made only if
// somebody waits for it.
type state struct {
	snap Snapshot
	next atomic.Pointer[chan struct{}]
}

// closed is the next of a state whose successor is published.
var closed = func() *chan struct{} {
	c := make(chan struct{})
	close(c)
	return &c
}()

// successor returns a channel closed once the version after st is
// published.
func (st *state) successor() <-chan struct{} {
	for {
		if p := st.next.Load(); p != nil {
			return *p
		}
		c := make(chan struct{})
		if st.next.CompareAndSwap(nil, &c) {
			return c
		}
	}
}

// superseded wakes the waiters of st's successor.
func (st *state) superseded() {
	if p := st.next.Swap(closed); p != nil && p != closed {
		close(*p)
	}
}

var serverIDs atomic.Uint64

// New returns a server at version 0 holding a deep copy of initial.
//
// It returns a *[ShapeError] if initial has no parameters or a parameter
// with no elements, and a *[NonFiniteError] if a parameter holds a NaN or
// an infinity. Contradictory options panic (see [Option]).
func New(initial Params, opts ...Option) (*Server, error) {
	cfg := defaults()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	cfg.validate()
	l, err := newLayout(initial)
	if err != nil {
		return nil, err
	}
	if err := checkFinite(initial, NonFiniteInitial); err != nil {
		return nil, err
	}
	id := serverIDs.Add(1)
	s := &Server{
		name:   fmt.Sprintf("paramserver#%d", id),
		id:     id,
		cfg:    cfg,
		policy: staleness.Policy{MaxStaleness: cfg.maxStaleness},
		layout: l,
		all:    1<<l.shards - 1,
		shards: make([]*lockorder.Mutex, l.shards),
		commit: lockorder.NewMutex("paramserver.commit"),
		hist:   make([]atomic.Pointer[state], cfg.history),
	}
	for i := range s.shards {
		s.shards[i] = lockorder.NewMutex("paramserver.shard")
	}
	s.tel = newTelemetry(&cfg)
	s.initWorkers()
	st := &state{snap: Snapshot{Params: initial.Clone()}}
	s.hist[0].Store(st)
	s.cur.Store(st)
	registry.Add(registry.Servers, s, (*Server).view) // weakly, for debughttp's page
	return s, nil
}

// String returns the server's name, "paramserver#N", as used in reports.
func (s *Server) String() string { return s.name }

// Version returns the current version.
func (s *Server) Version() uint64 { return s.cur.Load().snap.Version }

// Get returns the current parameters and their version, read together
// with one atomic load: never a torn or half-applied update. It does not
// lock or allocate, but on the first call of a worker of a server without
// [WithWorkers], which makes the worker's state under a lock.
//
// A worker's reads never go backwards: if Get ever returned a version
// older than one it returned to the same worker before (which would be a
// bug in the server), it reports a version-regression violation. A worker
// out of range panics (see WithWorkers).
func (s *Server) Get(worker int) Snapshot {
	ws := s.worker(worker)
	last := ws.lastRead.Load() // before cur: a read that set it came before ours
	st := s.cur.Load()
	v := st.snap.Version
	if v < last {
		s.reportRegression(worker, last, v)
		return st.snap
	}
	for v > last && !ws.lastRead.CompareAndSwap(last, v) {
		last = ws.lastRead.Load()
	}
	return st.snap
}

// publish makes version latest+1 current, with the tensors in fresh
// replacing latest's, and wakes the version waiters. Called with commit
// held, and with the shard locks of fresh's keys.
func (s *Server) publish(latest *state, fresh Params) *state {
	params := maps.Clone(latest.snap.Params)
	maps.Copy(params, fresh)
	next := &state{snap: Snapshot{Version: latest.snap.Version + 1, Params: params}}
	s.hist[next.snap.Version%uint64(len(s.hist))].Store(next)
	s.cur.Store(next)
	latest.superseded()
	return next
}

// lockShards locks the shards in mask, lowest index first: the canonical
// order every writer follows.
func (s *Server) lockShards(mask uint64) {
	for i, m := range s.shards {
		if mask&(1<<i) != 0 {
			m.Lock()
		}
	}
}

// unlockShards unlocks the shards in mask, in reverse order.
func (s *Server) unlockShards(mask uint64) {
	for i := len(s.shards) - 1; i >= 0; i-- {
		if mask&(1<<i) != 0 {
			s.shards[i].Unlock()
		}
	}
}
