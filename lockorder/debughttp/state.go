package debughttp

import (
	"slices"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

// maxObjects bounds the barriers, clocks and servers listed, each.
const maxObjects = 100

// maxDetail bounds the text of a violation's Detail shown.
const maxDetail = 8 << 10

// State is everything the live view shows, read at one instant; the
// view's ?format=json is its JSON form.
type State struct {
	Time time.Time `json:"time"`
	// Mode is lockorder's mode: off, trace or check.
	Mode string `json:"mode"`
	// Health is what the health check answers now.
	Health HealthReport `json:"health"`
	// Waits lists the goroutines blocked in syncwatch waits, oldest
	// first.
	Waits []Wait `json:"waits"`
	// Held lists the locks held now, when lockorder's held profile is on.
	Held     Held      `json:"held"`
	Loops    []Loop    `json:"loops"`
	Barriers []Barrier `json:"barriers"`
	Clocks   []Clock   `json:"clocks"`
	Servers  []Server  `json:"servers"`
	// Violations lists the latest violations, newest first, and
	// ViolationCount how many are recorded in all.
	Violations     []Violation `json:"violations"`
	ViolationCount int         `json:"violation_count"`
	// LockGraph is lockorder's lock-order graph (check mode).
	LockGraph Graph `json:"lock_graph"`
}

// Loop is a loop watched by the watchdog package.
type Loop struct {
	Name     string `json:"name"`
	Bound    string `json:"bound"`
	Pending  int    `json:"pending"`
	Steps    uint64 `json:"steps"`
	LastStep string `json:"last_step,omitempty"` // how long ago: "3.2s"
	// Goroutine is the goroutine of its latest Step.
	Goroutine int64 `json:"goroutine,omitempty"`
	// Stalls counts its stall episodes so far; Stalled is set while it
	// is stalled, with BlockedOn what it is blocked on.
	Stalls    uint64 `json:"stalls"`
	Stalled   bool   `json:"stalled"`
	BlockedOn string `json:"blocked_on,omitempty"`
}

// Barrier is a barrier's state (see barrier.Barrier.Status).
type Barrier struct {
	Name       string `json:"name"`
	Parties    int    `json:"parties"`
	Generation uint64 `json:"generation"`
	Arrived    []int  `json:"arrived"`
	// Waiting is how long ago the generation's first rank arrived.
	Waiting string        `json:"waiting,omitempty"`
	Missing []MissingRank `json:"missing,omitempty"`
	Left    []int         `json:"left,omitempty"`
	// Last describes the latest finished generation.
	Last string `json:"last,omitempty"`
}

// MissingRank is a rank a barrier waits for, and why it is missing.
type MissingRank struct {
	Rank      int    `json:"rank"`
	Goroutine int64  `json:"goroutine,omitempty"`
	Why       string `json:"why"`
}

// Clock is a staleness clock's state (see staleness.Clock.Status).
type Clock struct {
	Name    string       `json:"name"`
	Workers int          `json:"workers"`
	MaxSkew uint64       `json:"max_skew"`
	Min     uint64       `json:"min"`
	Max     uint64       `json:"max"`
	Active  int          `json:"active"`
	Waiting int          `json:"waiting"`
	Slowest []SlowWorker `json:"slowest"`
}

// SlowWorker is one of a clock's slowest workers.
type SlowWorker struct {
	Worker     int    `json:"worker"`
	Clock      uint64 `json:"clock"`
	Goroutine  int64  `json:"goroutine,omitempty"`
	WaitingFor string `json:"waiting_for,omitempty"`
}

// Server is a parameter server's state (see paramserver.Server.Status).
type Server struct {
	Name         string         `json:"name"`
	Version      uint64         `json:"version"`
	MaxStaleness uint64         `json:"max_staleness"`
	Pending      int            `json:"pending"`
	Watchers     int            `json:"watchers"`
	Workers      []ServerWorker `json:"workers"`
}

// ServerWorker is one worker's view of a parameter server.
type ServerWorker struct {
	Worker int `json:"worker"`
	// ReadLag is how many versions the server is past the newest one the
	// worker read.
	ReadLag       uint64 `json:"read_lag"`
	Accepted      uint64 `json:"accepted"`
	TooStale      uint64 `json:"too_stale"`
	FutureVersion uint64 `json:"future_version"`
	BadShape      uint64 `json:"bad_shape"`
	NonFinite     uint64 `json:"non_finite"`
}

// Violation is one recorded lockorder violation.
type Violation struct {
	ID        uint64    `json:"id"`
	Kind      string    `json:"kind"`
	Source    string    `json:"source"`
	Message   string    `json:"message"`
	Time      time.Time `json:"time"`
	Goroutine int64     `json:"goroutine,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	// Instances counts the occurrences grouped under it (the same cycle
	// between the fields of other objects), 0 if not counted.
	Instances int `json:"instances,omitempty"`
	// TraceFile is the execution trace written for it (see
	// lockorder.WithFlightRecorder).
	TraceFile string `json:"trace_file,omitempty"`
}

// Collect reads the state the live view shows. It takes a goroutine dump
// (which stops the world) only if some goroutine waits or a loop is
// stalled, and reuses a recent one (see the package doc) however often it
// is called.
func Collect(opts ...Option) *State { return collect(newConfig(opts)) }

func collect(c config) *State {
	sc := newScene()
	st := &State{
		Time:      time.Now(),
		Mode:      lockorder.CurrentMode().String(),
		Health:    HealthReport{Status: "ok", Stalled: stalled(watchdog.Stalls()), Deadlocks: sc.deadlocks()},
		Waits:     sc.waits(),
		Held:      heldLocks(),
		Loops:     loops(),
		Barriers:  barriers(),
		Clocks:    clocks(),
		Servers:   servers(),
		LockGraph: lockGraph(),
	}
	if !st.Health.Healthy() {
		st.Health.Status = "unhealthy"
	}
	st.Violations, st.ViolationCount = violations(c.recent)
	return st
}

func loops() []Loop {
	var out []Loop
	for _, s := range watchdog.Loops() {
		l := Loop{Name: s.Name, Bound: s.Bound.String(), Pending: s.Pending, Steps: s.Steps, Goroutine: s.Goroutine, Stalls: s.Stalls}
		if !s.LastStep.IsZero() {
			l.LastStep = ago(time.Since(s.LastStep))
		}
		if s.Stall != nil {
			l.Stalled, l.BlockedOn = true, s.Stall.BlockedOn
		}
		out = append(out, l)
	}
	return out
}

func barriers() []Barrier {
	var out []Barrier
	for _, b := range first(registry.Live[barrier.Barrier](registry.Barriers)) {
		s := b.Status()
		x := Barrier{Name: s.Name, Parties: s.Parties, Generation: s.Generation, Arrived: s.Arrived, Left: s.Left}
		if len(s.Arrived) > 0 {
			x.Waiting = ago(s.Waiting)
		}
		for _, m := range s.Missing {
			x.Missing = append(x.Missing, MissingRank{Rank: m.Rank, Goroutine: m.Goroutine, Why: m.Reason})
		}
		if s.Last != nil {
			x.Last = s.Last.String()
		}
		out = append(out, x)
	}
	return out
}

func clocks() []Clock {
	var out []Clock
	for _, c := range first(registry.Live[staleness.Clock](registry.Clocks)) {
		s := c.Status()
		x := Clock{Name: s.Name, Workers: s.Workers, MaxSkew: s.MaxSkew, Min: s.Min, Max: s.Max, Active: s.Active, Waiting: s.Waiting}
		for _, w := range s.Slowest {
			x.Slowest = append(x.Slowest, SlowWorker{Worker: w.Worker, Clock: w.Clock, Goroutine: w.Goroutine, WaitingFor: w.WaitingFor})
		}
		out = append(out, x)
	}
	return out
}

func servers() []Server {
	var out []Server
	for _, s := range first(registry.Live[paramserver.Server](registry.Servers)) {
		st := s.Status()
		x := Server{Name: st.Name, Version: st.Version, MaxStaleness: st.MaxStaleness, Pending: st.Pending, Watchers: st.Watchers}
		for i, w := range st.Workers {
			x.Workers = append(x.Workers, ServerWorker{
				Worker: i, ReadLag: st.ReadLag[i], Accepted: w.Accepted,
				TooStale: w.TooStale, FutureVersion: w.FutureVersion, BadShape: w.BadShape, NonFinite: w.NonFinite,
			})
		}
		out = append(out, x)
	}
	return out
}

// first returns at most maxObjects of xs.
func first[T any](xs []*T) []*T { return xs[:min(len(xs), maxObjects)] }

// violations returns the latest n violations, newest first, and how many
// are recorded.
func violations(n int) ([]Violation, int) {
	all := lockorder.Violations()
	var out []Violation
	for _, v := range slices.Backward(all) {
		if len(out) == n {
			break
		}
		x := Violation{ID: v.ID, Kind: string(v.Kind), Source: v.Source, Message: v.Message, Time: v.Time, Goroutine: v.Goroutine, Detail: v.Detail, Instances: v.Instances}
		if len(x.Detail) > maxDetail {
			x.Detail = x.Detail[:maxDetail] + "\n(cut)"
		}
		for _, a := range v.Attrs {
			if a.Key == lockorder.TraceFileAttribute {
				x.TraceFile = a.Value.AsString()
			}
		}
		out = append(out, x)
	}
	return out, len(all)
}
