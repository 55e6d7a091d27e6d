//go:build !syncwatch_off

package debughttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/debughttp"
	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

func get(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec
}

func state(t *testing.T, h http.Handler) debughttp.State {
	t.Helper()
	rec := get(t, h, "/debug/syncwatch?format=json")
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var st debughttp.State
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st))
	return st
}

// During a deadlock, the JSON and the page show the cycle with both
// locks, each goroutine's stack, and the lock-order graph with the cycle.
func TestViewShowsTheDeadlock(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	abba(t, "view_a", "view_b")
	awaitProof(t, "view_a")
	h := debughttp.View()

	st := state(t, h)
	assert.Equal(t, "check", st.Mode)
	assert.Equal(t, "unhealthy", st.Health.Status)
	require.Len(t, st.Health.Deadlocks, 1)
	assert.ElementsMatch(t, []string{"view_a#1", "view_b#1"}, trimSeq(st.Health.Deadlocks[0].Locks))
	var inCycle int
	for _, w := range st.Waits {
		if w.InCycle && strings.HasPrefix(w.WaitingFor, "lock view_") {
			inCycle++
			assert.NotZero(t, w.Holder)
			require.Len(t, w.BlockedBy, 1)
			assert.Contains(t, w.BlockedBy[0].Doing, "waiting for lock view_")
			assert.Contains(t, w.Why, "closes a cycle of waits")
			assert.Equal(t, "sync.Mutex.Lock", w.State)
			assert.NotEmpty(t, w.Stack)
		}
	}
	assert.Equal(t, 2, inCycle)
	var red int
	for _, e := range st.LockGraph.Edges {
		if strings.HasPrefix(e.From, "view_") && e.Cycle {
			red++
			assert.Contains(t, e.Where, "main_test.go:")
		}
	}
	assert.Equal(t, 2, red, "the cycle's edges, A -> B and B -> A")
	// lockorder's monitor reports it too, once every goroutine has been
	// seen blocked across its grace period: on a loaded machine a look
	// may find some goroutine running, so the wait is generous, and the
	// polls sparse enough not to be that goroutine each time.
	require.Eventually(t, func() bool {
		for _, v := range state(t, h).Violations {
			if v.Kind == "deadlock" && strings.Contains(v.Message, "view_a#") {
				return true
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "the deadlock violation is listed")

	page := get(t, h, "/debug/syncwatch").Body.String()
	assert.Contains(t, page, `<meta http-equiv="refresh" content="5">`)
	assert.Contains(t, page, "UNHEALTHY")
	assert.Contains(t, page, "Deadlocks")
	assert.Contains(t, page, "view_a#")
	assert.Contains(t, page, "view_b#")
	assert.Contains(t, page, "<svg")
	assert.Contains(t, page, `stroke="#d00"`, "the cycle is drawn in red")
	assert.NotContains(t, page, "<script", "readable without JavaScript")

	page = get(t, h, "/debug/syncwatch?refresh=0").Body.String()
	assert.NotContains(t, page, `http-equiv="refresh"`)
}

func TestViewWhileAllIsWell(t *testing.T) {
	h := debughttp.View(debughttp.WithRefresh(time.Minute), debughttp.WithRecent(3))
	page := get(t, h, "/debug/syncwatch").Body.String()
	assert.Contains(t, page, `<meta http-equiv="refresh" content="60">`)
	assert.Contains(t, page, "Healthy: no watched loop is stalled, no deadlock.")
	assert.LessOrEqual(t, len(state(t, h).Violations), 3)
}

// Names come from the program: the page escapes them.
func TestViewEscapesNames(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	stall(t, `<script>alert("loop")</script>`)
	page := get(t, debughttp.View(), "/debug/syncwatch").Body.String()
	assert.NotContains(t, page, `<script>alert`)
	assert.Contains(t, page, `&lt;script&gt;alert(&#34;loop&#34;)&lt;/script&gt;`)
}

// Barriers, clocks and parameter servers are listed while reachable.
func TestViewListsBarriersClocksAndServers(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	b := barrier.New(3, barrier.WithName("view-allreduce"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.Await(ctx, 2); done <- err }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { _, arrived := b.Current(); return len(arrived) == 1 }, 10*time.Second, time.Millisecond)

	c := staleness.NewClock(2, 1)
	_, err := c.Advance(ctx, 1)
	require.NoError(t, err)
	s, err := paramserver.New(paramserver.Params{"w": {0, 0}}, paramserver.WithWorkers(2))
	require.NoError(t, err)
	_, err = s.Apply(ctx, 0, paramserver.Params{"w": {1, 1}}, 0)
	require.NoError(t, err)

	st := state(t, debughttp.View())
	var bar *debughttp.Barrier
	for i := range st.Barriers {
		if st.Barriers[i].Name == "view-allreduce" {
			bar = &st.Barriers[i]
		}
	}
	require.NotNil(t, bar)
	assert.Equal(t, []int{2}, bar.Arrived)
	require.Len(t, bar.Missing, 2)
	assert.Equal(t, "never arrived at this barrier", bar.Missing[0].Why)

	var clk *debughttp.Clock
	for i := range st.Clocks {
		if st.Clocks[i].Name == c.String() {
			clk = &st.Clocks[i]
		}
	}
	require.NotNil(t, clk)
	assert.Equal(t, uint64(0), clk.Min)
	assert.Equal(t, uint64(1), clk.Max)
	assert.Equal(t, 0, clk.Slowest[0].Worker)

	var srv *debughttp.Server
	for i := range st.Servers {
		if st.Servers[i].Name == s.String() {
			srv = &st.Servers[i]
		}
	}
	require.NotNil(t, srv)
	assert.Equal(t, uint64(1), srv.Version)
	require.Len(t, srv.Workers, 2)
	assert.Equal(t, uint64(1), srv.Workers[0].Accepted)
	assert.Equal(t, uint64(1), srv.Workers[1].ReadLag)

	page := get(t, debughttp.View(), "/debug/syncwatch").Body.String()
	assert.Contains(t, page, "view-allreduce")
	assert.Contains(t, page, "rank 0: never arrived at this barrier")
	assert.Contains(t, page, c.String())
	assert.Contains(t, page, s.String())
}

// With the held profile on, the locks held now are listed with where
// they were taken.
func TestViewListsHeldLocks(t *testing.T) {
	lockorder.Configure(lockorder.WithHeldProfile(true))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithHeldProfile(false)) })
	m := lockorder.NewMutex("held_in_view")
	m.Lock()
	st := state(t, debughttp.View())
	m.Unlock()
	require.Positive(t, st.Held.Total)
	var here bool
	for _, l := range st.Held.Locks {
		here = here || (len(l.Stack) > 0 && strings.Contains(l.Stack[0], "TestViewListsHeldLocks"))
	}
	assert.True(t, here, "%+v", st.Held)
}

// An empty lock-order graph in check mode says why it may be empty (R23:
// a deadlock not proven adds no edge), not that the graph needs check
// mode.
func TestViewSaysWhyItsGraphIsEmpty(t *testing.T) {
	lockorder.Reset()
	page := get(t, debughttp.View(), "/debug/syncwatch").Body.String()
	assert.Contains(t, page, "mode check")
	assert.Contains(t, page, "Empty: no order edge recorded yet.")
	assert.NotContains(t, page, "the graph is kept in check mode")
}
