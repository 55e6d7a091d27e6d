//go:build !syncwatch_off

package debughttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder/debughttp"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

func getHealth(t *testing.T, h http.Handler) (int, debughttp.HealthReport) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	var body debughttp.HealthReport
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	return rec.Code, body
}

// The incident's first bug: a watchdog that said 503 after idling. An
// idle loop is healthy however long it idles.
func TestHealthIsOKWhileIdle(t *testing.T) {
	defer goleak.VerifyNone(t)
	loop := watchdog.New("idle-health", watchdog.WithBound(5*time.Millisecond))
	defer loop.Close()
	loop.Step()
	time.Sleep(100 * time.Millisecond) // time passing: idle for twenty bounds
	code, body := getHealth(t, debughttp.Health())
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, debughttp.HealthReport{Status: "ok"}, body)
}

func TestHealthNamesTheStalledLoopAndWhatItIsBlockedOn(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the stall's cleanup
	stall(t, "inference")
	code, body := getHealth(t, debughttp.Health())
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "unhealthy", body.Status)
	require.Len(t, body.Stalled, 1)
	s := body.Stalled[0]
	assert.Equal(t, "inference", s.Loop)
	assert.Equal(t, 1, s.Pending)
	assert.Equal(t, "20ms", s.Bound)
	assert.Greater(t, s.SinceSeconds, 0.02)
	assert.True(t, strings.HasSuffix(s.Since, "s"), s.Since)
	assert.Contains(t, s.BlockedOn, "lock inference_ledger#")
	assert.Contains(t, s.BlockedOn, ", held by goroutine ")
	assert.Contains(t, s.BlockedOn, "which is blocked in chan receive at ")
	assert.NotZero(t, s.Goroutine)
}

func TestHealthReportsADeadlock(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the deadlock's cleanup
	abba(t, "health_a", "health_b")
	code, body := getHealth(t, debughttp.Health())
	assert.Equal(t, http.StatusServiceUnavailable, code)
	require.Len(t, body.Deadlocks, 1)
	d := body.Deadlocks[0]
	assert.Len(t, d.Goroutines, 2)
	assert.ElementsMatch(t, []string{"health_a#1", "health_b#1"}, trimSeq(d.Locks))
	assert.Contains(t, d.Cycle, "waits for lock health_a#")
	assert.Contains(t, d.Cycle, ", held by goroutine ")
	for _, g := range d.Goroutines {
		assert.True(t, g.InCycle)
		assert.NotEmpty(t, g.Stack, "each goroutine's stack")
		assert.Len(t, g.Holds, 1)
	}
}

// trimSeq maps "name#N" to "name#1", for lock names whose instance
// numbers depend on the tests run before.
func trimSeq(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		base, _, _ := strings.Cut(n, "#")
		out[i] = base + "#1"
	}
	return out
}

func TestHeadGetsTheStatusAlone(t *testing.T) {
	rec := httptest.NewRecorder()
	debughttp.Health().ServeHTTP(rec, httptest.NewRequest("HEAD", "/healthz", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Empty(t, rec.Body.String())
}

// Probes and people hit the handlers at once, while something is wrong.
func TestHandlersUnderConcurrentRequests(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the stall's cleanup
	stall(t, "concurrent")
	srv := httptest.NewServer(http.NewServeMux())
	mux := http.NewServeMux()
	mux.Handle("/healthz", debughttp.Health())
	mux.Handle("/debug/syncwatch", debughttp.View())
	srv.Config.Handler = mux
	defer srv.Close()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 5 {
				path := []string{"/healthz", "/debug/syncwatch", "/debug/syncwatch?format=json"}[(i+j)%3]
				resp, err := http.Get(srv.URL + path)
				if !assert.NoError(t, err) {
					return
				}
				resp.Body.Close()
				if path == "/healthz" {
					assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
				} else {
					assert.Equal(t, http.StatusOK, resp.StatusCode)
				}
			}
		})
	}
	wg.Wait()
}
