//go:build !syncwatch_off

package debughttp_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/leak"
	"github.com/syncwatch/syncwatch/internal/waitfor"
	"github.com/syncwatch/syncwatch/lockorder/debughttp"
)

// leakScene is what the child process of TestLeakCheckOnDemand saw.
type leakScene struct {
	Leaked                   int64
	Plain, Asked, Page       debughttp.HealthReport
	ChecksPlain, ChecksAsked int64
	HTML                     string
}

// TestLeakCheckOnDemand: a health probe or a page load runs no leak check
// (no garbage collection); "?leaks=1" runs one and lists the leaked
// goroutine, without making the health check fail. A leaked goroutine
// cannot be ended, so the scene runs in a child process (TestMain's
// goleak check would fail this one).
func TestLeakCheckOnDemand(t *testing.T) {
	if os.Getenv("DEBUGHTTP_LEAK_SCENE") != "" {
		json.NewEncoder(os.Stdout).Encode(leakCheckScene())
		os.Exit(0)
	}
	if !leak.Supported() {
		t.Skipf("%s cannot tell leaked goroutines (Go 1.27 can)", runtime.Version())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeakCheckOnDemand$")
	cmd.Env = append(os.Environ(), "DEBUGHTTP_LEAK_SCENE=1")
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var s leakScene
	require.NoError(t, json.Unmarshal(out[strings.IndexByte(string(out), '{'):], &s), "%s", out)
	assert.Zero(t, s.ChecksPlain, "a plain probe or page load ran a leak check")
	assert.Nil(t, s.Plain.Leaks)
	assert.Equal(t, int64(2), s.ChecksAsked, "one check per request that asks")
	for _, h := range []debughttp.HealthReport{s.Asked, s.Page} {
		assert.Equal(t, "ok", h.Status, "a leak does not fail the probe")
		require.NotNil(t, h.Leaks)
		assert.True(t, h.Leaks.Supported)
		require.Len(t, h.Leaks.Goroutines, 1)
		assert.Equal(t, s.Leaked, h.Leaks.Goroutines[0].Goroutine)
		assert.Contains(t, h.Leaks.Goroutines[0].Message, "is blocked for good in chan receive")
	}
	assert.Contains(t, s.HTML, "check for leaked goroutines")
}

func leakCheckScene() leakScene {
	ids := make(chan int64)
	go func() {
		never := make(chan int)
		ids <- goid.ID()
		<-never
	}()
	var s leakScene
	s.Leaked = <-ids
	for waitfor.Fresh().States()[s.Leaked] != "chan receive" {
		runtime.Gosched()
	}
	serve := func(url string, viewJSON bool) debughttp.HealthReport {
		rec := httptest.NewRecorder()
		var st debughttp.State
		if viewJSON {
			debughttp.View().ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
		} else {
			debughttp.Health().ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
		}
		dst := any(&st.Health)
		if viewJSON {
			dst = &st
		}
		if err := json.Unmarshal(rec.Body.Bytes(), dst); err != nil {
			panic(fmt.Sprint(err, rec.Body.String()))
		}
		return st.Health
	}
	before := leak.Count()
	s.Plain = serve("/healthz", false)
	page := httptest.NewRecorder()
	debughttp.View().ServeHTTP(page, httptest.NewRequest("GET", "/debug/syncwatch", nil))
	s.HTML = page.Body.String()
	s.ChecksPlain = leak.Count() - before
	before = leak.Count()
	s.Asked = serve("/healthz?leaks=1", false)
	s.Page = serve("/debug/syncwatch?format=json&leaks=1", true)
	s.ChecksAsked = leak.Count() - before
	return s
}
