//go:build !syncwatch_off

package lockorder

import (
	"os"
	"testing"
)

// The syncwatch command builds with an experiment of its own in
// GOEXPERIMENT; the binary puts the user's setting back, or none.
func TestRestoreGoExperiment(t *testing.T) {
	for _, tc := range []struct {
		marker  string
		want    string
		wantSet bool
	}{
		{"=arenas", "arenas", true},
		{"=", "", true},
		{"", "", false},
	} {
		t.Setenv("GOEXPERIMENT", "goroutineleakprofile")
		t.Setenv(GoExperimentEnv, tc.marker)
		restoreGoExperiment()
		got, set := os.LookupEnv("GOEXPERIMENT")
		if got != tc.want || set != tc.wantSet {
			t.Errorf("marker %q: GOEXPERIMENT %q (set %v), want %q (set %v)", tc.marker, got, set, tc.want, tc.wantSet)
		}
		if _, set := os.LookupEnv(GoExperimentEnv); set {
			t.Errorf("marker %q: the marker is left in the environment", tc.marker)
		}
	}
	// Without the marker, nothing changes.
	t.Setenv("GOEXPERIMENT", "arenas")
	os.Unsetenv(GoExperimentEnv)
	restoreGoExperiment()
	if got := os.Getenv("GOEXPERIMENT"); got != "arenas" {
		t.Errorf("without the marker: GOEXPERIMENT %q, want it untouched", got)
	}
}
