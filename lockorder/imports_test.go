package lockorder_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every program that declares a Mutex links what lockorder imports, so
// lockorder keeps away from heavy packages: the go.opentelemetry.io/otel
// package (its propagators import net/http, which made a one-mutex
// program four times the size of one using sync), and pprof's profile
// package (regexp, parsers). The syncwatch_off build, plain sync locks
// with the same API, also leaves out the testing package and runtime/pprof:
// only the OpenTelemetry API packages its signatures name remain.
func TestImportsStayLight(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	heavy := []string{
		"net", "net/http", "crypto/tls", "regexp",
		"go.opentelemetry.io/otel", "go.opentelemetry.io/otel/propagation",
		"github.com/google/pprof/profile",
	}
	for _, c := range []struct {
		tags   string
		banned []string
	}{
		{"", heavy},
		{"syncwatch_off", append(slices.Clip(heavy), "testing", "runtime/pprof", "flag", "github.com/petermattis/goid")},
	} {
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(gobin, "list", "-deps", "-tags="+c.tags, ".").CombinedOutput()
		require.NoError(t, err, "%s", out)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, "github.com/syncwatch/syncwatch/lockorder")
		for _, b := range c.banned {
			assert.NotContains(t, deps, b, "lockorder (tags %q) imports %s", c.tags, b)
		}
	}
}
