package debughttp

import (
	"encoding/json"
	"net/http"

	"github.com/syncwatch/syncwatch/internal/registry"
	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

// Stalled is a watched loop that has work pending and has not stepped for
// longer than its bound (see the watchdog package).
type Stalled struct {
	Loop string `json:"loop"`
	// Since says how long ago the loop last stepped (or work arrived, if
	// later): "196s". SinceSeconds is the same in seconds.
	Since        string  `json:"since"`
	SinceSeconds float64 `json:"since_seconds"`
	Bound        string  `json:"bound"`
	Pending      int     `json:"pending"`
	// Goroutine is the loop's goroutine, and BlockedOn what it is blocked
	// on: "lock ledger#1, held by goroutine 28, which is blocked in
	// select at ...".
	Goroutine int64  `json:"goroutine,omitempty"`
	BlockedOn string `json:"blocked_on"`
}

// HealthReport is the body of the health check's answer.
type HealthReport struct {
	// Status is "ok" or "unhealthy".
	Status    string     `json:"status"`
	Stalled   []Stalled  `json:"stalled,omitempty"`
	Deadlocks []Deadlock `json:"deadlocks,omitempty"`
	// Leaks is the answer of a leak check, run only when the request asks
	// for one (see [LeakParam]); leaked goroutines do not change Status.
	Leaks *Leaks `json:"leaks,omitempty"`
}

// Healthy reports whether nothing is stalled or deadlocked.
func (h HealthReport) Healthy() bool { return len(h.Stalled) == 0 && len(h.Deadlocks) == 0 }

// CheckHealth looks for stalled loops and deadlocks now: the answer
// [Health] serves. With neither, it costs a look at each watched loop and
// a snapshot of the waits, and takes no goroutine dump.
func CheckHealth() HealthReport {
	h := HealthReport{Status: "ok", Stalled: stalled(watchdog.Stalls())}
	if waitfor.Len() > 0 {
		h.Deadlocks = newScene().deadlocks()
	}
	if !h.Healthy() {
		h.Status = "unhealthy"
	}
	return h
}

func stalled(ss []watchdog.Stall) []Stalled {
	var out []Stalled
	for _, s := range ss {
		out = append(out, Stalled{
			Loop:         s.Loop,
			Since:        registry.Ago(s.For),
			SinceSeconds: s.For.Seconds(),
			Bound:        s.Bound.String(),
			Pending:      s.Pending,
			Goroutine:    s.Goroutine,
			BlockedOn:    s.BlockedOn,
		})
	}
	return out
}

// Health returns a handler for liveness and readiness probes. It answers
// 200 with {"status":"ok"} while nothing is stalled, and 503 with the
// reasons only when a watched loop with pending work has stalled, or
// goroutines have been deadlocked in syncwatch waits for [DeadlockGrace]:
//
//	{"status":"unhealthy","stalled":[{"loop":"inference","since":"196s",
//	 "pending":3,"blocked_on":"lock aggregation_lock#1, held by goroutine
//	 28, which is blocked in chan receive at ..."}]}
//
// An idle loop (nothing pending) is healthy however long it idles. A
// deadlock is seen where lockorder knows lock holders (its check mode) or
// where the waits name who they need (Once, WaitGroup): in trace mode,
// goroutines blocked on each other's locks are listed by [View] but do
// not form a cycle here. With "?leaks=1" (see [LeakParam]) it also runs a
// leak check and lists the leaked goroutines, without changing the
// status. The body is the same for every method; HEAD gets
// the status alone. It is safe for concurrent use.
func Health() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := CheckHealth()
		h.Leaks = leaksAsked(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		status := http.StatusOK
		if !h.Healthy() {
			status = http.StatusServiceUnavailable
		}
		w.WriteHeader(status)
		if r.Method == http.MethodHead {
			return
		}
		json.NewEncoder(w).Encode(h)
	})
}
