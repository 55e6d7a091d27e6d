package registry

import (
	"fmt"
	"time"
)

// What the page shows of each kind of object. The page's package
// (lockorder/debughttp) exports these types under the same names, and
// their JSON form is its ?format=json.

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

// Ago formats a duration as the page shows how long ago something
// happened: tenths of a second below ten seconds ("3.2s"), whole seconds
// from there ("42s").
func Ago(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
