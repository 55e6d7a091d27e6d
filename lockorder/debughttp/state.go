package debughttp

import (
	"slices"
	"time"

	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
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

// The barriers, clocks and parameter servers are shown as their packages
// register them (see internal/registry), which import lockorder and so
// cannot be imported here.

// Barrier is a barrier's state (see barrier.Barrier.Status): its name,
// parties and generation, the ranks arrived and left, how long ago the
// first arrived, why the others are missing, and its latest finished
// generation.
type Barrier = registry.Barrier

// MissingRank is a rank a barrier waits for, its goroutine if known, and
// why it is missing.
type MissingRank = registry.MissingRank

// Clock is a staleness clock's state (see staleness.Clock.Status): its
// workers and skew bound, the smallest and largest clocks, how many
// workers are active and how many Advance calls wait, and its slowest
// workers.
type Clock = registry.Clock

// SlowWorker is one of a clock's slowest workers, its goroutine, and the
// syncwatch wait that goroutine is blocked in.
type SlowWorker = registry.SlowWorker

// Server is a parameter server's state (see paramserver.Server.Status):
// its version, staleness bound, pending gradients and watchers, and each
// worker's view of it.
type Server = registry.Server

// ServerWorker is one worker's view of a parameter server: how many
// versions the server is past the newest one the worker read, and the
// worker's gradients accepted and rejected, by reason.
type ServerWorker = registry.ServerWorker

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
		Barriers:  registry.Views(registry.Barriers, maxObjects),
		Clocks:    registry.Views(registry.Clocks, maxObjects),
		Servers:   registry.Views(registry.Servers, maxObjects),
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
			l.LastStep = registry.Ago(time.Since(s.LastStep))
		}
		if s.Stall != nil {
			l.Stalled, l.BlockedOn = true, s.Stall.BlockedOn
		}
		out = append(out, l)
	}
	return out
}

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
