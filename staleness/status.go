package staleness

import (
	"cmp"
	"slices"

	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// maxSlowest bounds the workers a ClockStatus lists.
const maxSlowest = 8

// ClockStatus is a clock's state at one instant, as a debugging page shows
// it: how far apart the workers are, and what the slowest are doing.
type ClockStatus struct {
	// Name, Workers and MaxSkew are the clock's.
	Name    string
	Workers int
	MaxSkew uint64
	// Min and Max are the smallest and largest clocks of the workers that
	// have not left, and Active how many have not.
	Min, Max uint64
	Active   int
	// Slowest lists at most eight active workers, slowest first: the ones
	// that hold the others back.
	Slowest []SlowWorker
	// Waiting counts the Advance calls blocked now, waiting for them.
	Waiting int
}

// SlowWorker is one of the slowest workers of a [ClockStatus].
type SlowWorker struct {
	WorkerClock
	// Goroutine is the goroutine of the worker's latest Advance, 0 if it
	// has not advanced yet, and WaitingFor the syncwatch wait that
	// goroutine is blocked in now ("lock store#1"), empty if none.
	Goroutine  int64
	WaitingFor string
}

// Status returns the clock's state now. It takes the clock's lock briefly
// and reads syncwatch's waits registry.
func (c *Clock) Status() ClockStatus {
	c.mu.Lock()
	s := ClockStatus{Name: c.name, Workers: len(c.clocks), MaxSkew: c.maxSkew, Min: c.min, Active: c.active}
	for w, clk := range c.clocks {
		if c.left[w] {
			continue
		}
		s.Max = max(s.Max, clk)
		s.Slowest = append(s.Slowest, SlowWorker{WorkerClock: WorkerClock{Worker: w, Clock: clk}, Goroutine: c.gids[w]})
	}
	c.mu.Unlock()
	slices.SortFunc(s.Slowest, func(a, b SlowWorker) int {
		return cmp.Or(cmp.Compare(a.Clock, b.Clock), cmp.Compare(a.Worker, b.Worker))
	})
	s.Slowest = s.Slowest[:min(len(s.Slowest), maxSlowest)]
	for i := range s.Slowest {
		if g := s.Slowest[i].Goroutine; g != 0 {
			if w := waitfor.Lookup(g); w != nil {
				s.Slowest[i].WaitingFor = waitfor.Describe(w)
			}
		}
	}
	for _, w := range waitfor.All() {
		if w.Kind == waitfor.KindClock && w.ObjectID == c.id {
			s.Waiting++
		}
	}
	return s
}

// view is what debughttp's page shows of the clock (see
// internal/registry).
func (c *Clock) view() registry.Clock {
	s := c.Status()
	x := registry.Clock{Name: s.Name, Workers: s.Workers, MaxSkew: s.MaxSkew, Min: s.Min, Max: s.Max, Active: s.Active, Waiting: s.Waiting}
	for _, w := range s.Slowest {
		x.Slowest = append(x.Slowest, registry.SlowWorker{Worker: w.Worker, Clock: w.Clock, Goroutine: w.Goroutine, WaitingFor: w.WaitingFor})
	}
	return x
}
