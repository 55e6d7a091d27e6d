package debughttp

import (
	"math"
	"net/http"
	"time"

	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/lockorder"
)

// LeakParam is the query parameter that asks [View] and [Health] to run a
// leak check: "?leaks=1". The check costs a garbage collection cycle, so
// it runs only when asked, never on a plain page load or probe.
const LeakParam = "leaks"

// Leaks is the answer of a leak check.
type Leaks struct {
	// Supported is false where the runtime cannot tell leaked goroutines
	// (before Go 1.27, unless 1.26 is built with
	// GOEXPERIMENT=goroutineleakprofile).
	Supported bool `json:"supported"`
	// Goroutines are the goroutines found blocked for good so far.
	Goroutines []Leaked `json:"goroutines,omitempty"`
}

// Leaked is a goroutine the runtime found blocked for good: on a channel,
// select or sync primitive that no runnable goroutine can reach.
type Leaked struct {
	Goroutine int64 `json:"goroutine"`
	// Message says where it is blocked, and Detail what syncwatch knows
	// of its wait and where it was started.
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
}

// CheckLeaks runs the runtime's leak detection (a garbage collection
// cycle) and returns every goroutine found blocked for good. Each is also
// recorded once as a leaked-goroutine violation (see
// lockorder.ReportBlocked). Nothing is checked in lockorder's off mode.
func CheckLeaks() Leaks {
	if !leak.Supported() {
		return Leaks{}
	}
	onlyLeaks := func(v lockorder.Violation) bool { return v.Kind != lockorder.KindLeaked }
	lockorder.ReportBlockedExcept(time.Duration(math.MaxInt64), true, onlyLeaks)
	out := Leaks{Supported: true}
	for _, v := range lockorder.Violations() {
		if v.Kind == lockorder.KindLeaked {
			out.Goroutines = append(out.Goroutines, Leaked{Goroutine: v.Goroutine, Message: v.Message, Detail: v.Detail})
		}
	}
	return out
}

// leaksAsked runs a leak check if r asks for one, and returns nil if not.
func leaksAsked(r *http.Request) *Leaks {
	if r.URL.Query().Get(LeakParam) == "" {
		return nil
	}
	l := CheckLeaks()
	return &l
}
