package debughttp_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Arrows point down only: barrier, paramserver and staleness import
// lockorder, so debughttp, under lockorder, must not import them (nor
// anything of the module's examples or benchmarks). It shows them as they
// register themselves, through internal/registry.
func TestImportsNoPackageAboveLockorder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const module = "github.com/syncwatch/syncwatch/"
	above := []string{"barrier", "paramserver", "staleness", "examples", "bench"}
	for _, tags := range []string{"", "syncwatch_off"} {
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(gobin, "list", "-deps", "-tags="+tags, ".").CombinedOutput()
		require.NoError(t, err, "%s", out)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, module+"lockorder/debughttp")
		for _, d := range deps {
			for _, a := range above {
				assert.False(t, d == module+a || strings.HasPrefix(d, module+a+"/"),
					"debughttp (tags %q) imports %s", tags, d)
			}
		}
	}
}
