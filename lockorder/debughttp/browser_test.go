//go:build !syncwatch_off

package debughttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/debughttp"
)

// browser returns the path of a Chromium to test the page with: the one
// named by SYNCWATCH_CHROMIUM, or the first found on PATH. It skips t if
// there is none.
func browser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SYNCWATCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium found on PATH (Debian: apt-get install chromium; or set SYNCWATCH_CHROMIUM): the live view is not tested in a browser")
	return ""
}

// newBrowser starts a headless Chromium with an empty profile, nothing
// in the background, and a tall window.
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1600),
	)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc() // waits for the browser to exit
	})
	return ctx
}

// The live view in a real browser during a deadlock and a stall: the
// page renders without JavaScript, shows the cycle with both locks and
// the stacks, the stalled loop and what it is blocked on, and the
// lock-order graph with the cycle in red. Its screenshot goes to
// SYNCWATCH_SCREENSHOT_DIR if set (else the test's temporary directory).
func TestViewInABrowser(t *testing.T) {
	path := browser(t)
	t.Cleanup(func() { goleak.VerifyNone(t) })
	lockorder.Reset() // the page's graph is this test's alone (go test -count)
	abba(t, "worker_lock", "aggregation_lock")
	awaitProof(t, "worker_lock")
	stall(t, "inference")

	mux := http.NewServeMux()
	mux.Handle("/debug/syncwatch", debughttp.View())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx := newBrowser(t, path)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/debug/syncwatch")))
	refresh, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`meta[http-equiv="refresh"]`), "content"))
	require.NoError(t, err)
	assert.Equal(t, "5", refresh.Value, "the page reloads itself")

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/debug/syncwatch?refresh=0")))
	title, err := chromedp.Run(ctx, chromedp.Title())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(title, "UNHEALTHY - syncwatch"), title)
	scripts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.scripts.length`))
	require.NoError(t, err)
	assert.Zero(t, scripts, "the page needs no JavaScript")

	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	require.NoError(t, err)
	for _, want := range []string{
		"UNHEALTHY: 1 stalled loop, 1 deadlock.",
		"Stalled loops", "inference", "lock inference_ledger#",
		"Deadlocks", "Cycle of 2 goroutines", "worker_lock#", "aggregation_lock#",
		"main_test.go:", // the goroutines' stacks
		"Goroutines blocked in syncwatch waits",
		"Lock-order graph",
	} {
		assert.Contains(t, text, want)
	}
	red, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('svg path[stroke="#d00"]').length`))
	require.NoError(t, err)
	assert.Equal(t, 2, red, "the cycle's two edges, in red")
	width, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('svg').getBoundingClientRect().width`))
	require.NoError(t, err)
	assert.Positive(t, width, "the graph is laid out")

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	dir := os.Getenv("SYNCWATCH_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	shot := filepath.Join(dir, "debughttp-view.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}
