package paramserver

import (
	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// Status is a server's state at one instant, as a debugging page shows
// it: its counters, how far behind each worker's view of the parameters
// is, and how many goroutines wait for a new version.
type Status struct {
	// Name is the server's name, "paramserver#N".
	Name string
	// Stats are the server's counters: version, staleness bound, pending
	// gradients, and each worker's accepted and rejected gradients.
	Stats
	// ReadLag is, by worker, how many versions the current one is past
	// the newest version [Server.Get] returned to that worker: how stale
	// the parameters it computes on are, if it computes on its latest
	// read. A worker that never called Get counts from version 0.
	ReadLag []uint64
	// Watchers counts the goroutines blocked now in [Server.WaitVersion]
	// or [Server.Watch], waiting for a version not yet published.
	Watchers int
}

// Status returns the server's state now. It takes no lock of the server.
func (s *Server) Status() Status {
	st := Status{Name: s.name, Stats: s.Stats()}
	states := s.workerStates()
	st.ReadLag = make([]uint64, len(st.Workers))
	for i := range st.ReadLag {
		var last uint64
		if i < len(states) && states[i] != nil {
			last = states[i].lastRead.Load()
		}
		if last < st.Version {
			st.ReadLag[i] = st.Version - last
		}
	}
	for _, w := range waitfor.All() {
		if w.Kind == waitfor.KindWatch && w.ObjectID == s.id {
			st.Watchers++
		}
	}
	return st
}

// view is what debughttp's page shows of the server (see
// internal/registry).
func (s *Server) view() registry.Server {
	st := s.Status()
	x := registry.Server{Name: st.Name, Version: st.Version, MaxStaleness: st.MaxStaleness, Pending: st.Pending, Watchers: st.Watchers}
	for i, w := range st.Workers {
		x.Workers = append(x.Workers, registry.ServerWorker{
			Worker: i, ReadLag: st.ReadLag[i], Accepted: w.Accepted,
			TooStale: w.TooStale, FutureVersion: w.FutureVersion, BadShape: w.BadShape, NonFinite: w.NonFinite,
		})
	}
	return x
}
