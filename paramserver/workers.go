package paramserver

import (
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"
)

// MaxUndeclaredWorkers bounds the workers of a server created without
// [WithWorkers]: it accepts workers 0 to MaxUndeclaredWorkers-1, each
// tracked from its first call, so that its memory grows with the workers
// that use it and stays bounded whatever numbers they give.
const MaxUndeclaredWorkers = 1 << 16

// workerState is one worker's counters, and its telemetry attributes,
// built once so that recording allocates nothing. It is padded so that
// workers do not share cache lines.
type workerState struct {
	lastRead  atomic.Uint64 // highest version Get returned to the worker
	accepted  atomic.Uint64
	tooStale  atomic.Uint64
	future    atomic.Uint64
	shape     atomic.Uint64
	nonFinite atomic.Uint64
	staleness []atomic.Uint64
	add       [outcomes][]metric.AddOption
	rec       [outcomes][]metric.RecordOption
	_         [64]byte
}

func (w *workerState) observe(staleness uint64) {
	b := uint64(len(w.staleness) - 1)
	w.staleness[min(staleness, b)].Add(1)
}

// workerSlots holds the state of each worker, by number. Readers load it
// without locking; a server without WithWorkers replaces it with a larger
// copy, under a lock, when a worker beyond it first calls. A worker's
// state, once made, is never replaced.
type workerSlots []atomic.Pointer[workerState]

// workerTable is the part of a Server that tracks its workers.
type workerTable struct {
	table atomic.Pointer[workerSlots]
	limit int  // workers are numbered 0 to limit-1
	fixed bool // declared with WithWorkers: every state made in New
	grow  sync.Mutex
}

// initWorkers makes the worker table: every worker's state if they were
// declared, none yet otherwise.
func (s *Server) initWorkers() {
	t := workerSlots{}
	s.workers.limit = MaxUndeclaredWorkers
	if n := s.cfg.workers; n > 0 {
		s.workers.limit, s.workers.fixed = n, true
		t = make(workerSlots, n)
		for w := range t {
			t[w].Store(s.newWorker(w))
		}
	}
	s.workers.table.Store(&t)
}

// worker returns the state of worker w, making it on w's first call if
// workers were not declared. A worker out of range panics.
func (s *Server) worker(w int) *workerState {
	if t := *s.workers.table.Load(); uint(w) < uint(len(t)) {
		if ws := t[w].Load(); ws != nil {
			return ws
		}
	}
	if w < 0 || w >= s.workers.limit || s.workers.fixed {
		panic(fmt.Sprintf("paramserver: worker %d out of range [0, %d): declare workers with WithWorkers", w, s.workers.limit))
	}
	return s.addWorker(w)
}

// addWorker makes the state of worker w, growing the table if w is beyond
// it, unless another call made it first.
func (s *Server) addWorker(w int) *workerState {
	s.workers.grow.Lock()
	defer s.workers.grow.Unlock()
	t := *s.workers.table.Load()
	if w >= len(t) {
		bigger := make(workerSlots, min(max(w+1, 2*len(t)), s.workers.limit))
		for i := range t {
			bigger[i].Store(t[i].Load())
		}
		t = bigger
		s.workers.table.Store(&t)
	}
	if ws := t[w].Load(); ws != nil {
		return ws
	}
	ws := s.newWorker(w)
	t[w].Store(ws)
	return ws
}

// newWorker makes the state of worker w.
func (s *Server) newWorker(w int) *workerState {
	ws := &workerState{staleness: make([]atomic.Uint64, histogramBuckets(s.cfg.maxStaleness))}
	ws.add, ws.rec = s.tel.workerOptions(w)
	return ws
}

// workerStates returns the state of each worker, by number, up to the
// highest one tracked; nil for a number not used.
func (s *Server) workerStates() []*workerState {
	t := *s.workers.table.Load()
	out := make([]*workerState, len(t))
	n := 0
	for w := range t {
		if out[w] = t[w].Load(); out[w] != nil {
			n = w + 1
		}
	}
	if s.workers.fixed {
		return out
	}
	return out[:n]
}
