package lockorder

import (
	"os"
	"strings"
)

// GoExperimentEnv is set by the syncwatch command for the programs and test
// binaries it builds with an experiment of its own in GOEXPERIMENT (the
// runtime's leak detection, under Go 1.26): it holds the GOEXPERIMENT the
// user had ("=" and its value), or is empty if there was none. lockorder's
// initialisation puts that back, so that a go command the program runs
// (a test that builds something) sees the user's setting, not
// syncwatch's. Not for other uses.
const GoExperimentEnv = "SYNCWATCH_GOEXPERIMENT"

// restoreGoExperiment puts back the GOEXPERIMENT syncwatch replaced (see
// GoExperimentEnv).
func restoreGoExperiment() {
	v, ok := os.LookupEnv(GoExperimentEnv)
	if !ok {
		return
	}
	os.Unsetenv(GoExperimentEnv)
	if orig, set := strings.CutPrefix(v, "="); set {
		os.Setenv("GOEXPERIMENT", orig)
		return
	}
	os.Unsetenv("GOEXPERIMENT")
}
