//go:build !syncwatch_off

package lockorder_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bounds on a program's binary size, as multiples of the same program
// built with sync (issue 22): the syncwatch_off build, the default build,
// and what the syncwatch_off build adds to the OpenTelemetry API packages
// its exported API names, as a fraction of sync's size.
const (
	maxOffSize    = 1.3
	maxNormalSize = 2.5
	maxOwnSize    = 0.06
)

// TestBinarySize builds testdata/size, whose goroutines share a Mutex, an
// RWMutex and a WaitGroup, with sync, with lockorder under -tags
// syncwatch_off and with lockorder, with and without fmt, and bounds the
// sizes. Sizes are deterministic for a toolchain: nothing here is timed.
//
// The syncwatch_off build imports the OpenTelemetry API packages whose
// types its exported API names (Violation.Attrs is an
// []attribute.KeyValue), and links their init. Built with sync and those
// imports (tag sizeotel), the program weighs the least the syncwatch_off
// build can. Where that alone is past maxOffSize (Go 1.27's encoding/json,
// which the attribute package imports, links fmt at init), the bound is
// out of reach without changing the API: then only lockorder's own part is
// bounded, and the test says so.
func TestBinarySize(t *testing.T) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	goCmd := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(gobin, args...)
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s: %s", strings.Join(args, " "), out)
		return out
	}
	otelImports := func(tags, pkg string) []string {
		out := goCmd("list", "-tags", tags, "-f", `{{join .Imports "\n"}}`, pkg)
		return slices.DeleteFunc(strings.Fields(string(out)), func(p string) bool {
			return !strings.HasPrefix(p, "go.opentelemetry.io/")
		})
	}
	require.Equal(t, otelImports("syncwatch_off", "."), otelImports("sizesync sizeotel", "./testdata/size"),
		"testdata/size/otel.go imports what the syncwatch_off build imports of OpenTelemetry")

	bin := filepath.Join(t.TempDir(), "size")
	size := func(tags string) float64 {
		t.Helper()
		goCmd("build", "-o", bin, "-tags", tags, "./testdata/size")
		fi, err := os.Stat(bin)
		require.NoError(t, err)
		return float64(fi.Size())
	}
	for _, c := range []struct{ name, tags string }{{"without-fmt", ""}, {"with-fmt", "sizefmt"}} {
		t.Run(c.name, func(t *testing.T) {
			sync := size("sizesync " + c.tags)
			floor := size("sizesync sizeotel " + c.tags)
			off := size("syncwatch_off " + c.tags)
			normal := size(c.tags)
			t.Logf("%s: sync %.0f bytes; sync and the OpenTelemetry API %.3fx; syncwatch_off %.3fx; default %.3fx",
				runtime.Version(), sync, floor/sync, off/sync, normal/sync)
			assert.LessOrEqual(t, normal/sync, maxNormalSize, "the default build over sync")
			assert.LessOrEqual(t, (off-floor)/sync, maxOwnSize, "what the syncwatch_off build adds to the OpenTelemetry API")
			if floor/sync > maxOffSize {
				t.Logf("the OpenTelemetry API packages alone are %.3fx sync's size with %s, past the %.1fx bound", floor/sync, runtime.Version(), maxOffSize)
				return
			}
			assert.LessOrEqual(t, off/sync, maxOffSize, "the syncwatch_off build over sync")
		})
	}
}
