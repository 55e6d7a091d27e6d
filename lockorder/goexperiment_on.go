//go:build !syncwatch_off

package lockorder

import "os"

// restoreGoExperiment puts back the GOEXPERIMENT syncwatch replaced (see
// GoExperimentEnv).
func restoreGoExperiment() {
	v, ok := os.LookupEnv(GoExperimentEnv)
	if !ok {
		return
	}
	os.Unsetenv(GoExperimentEnv)
	if v != "" && v[0] == '=' { // strings.CutPrefix, without strings in the syncwatch_off build
		os.Setenv("GOEXPERIMENT", v[1:])
		return
	}
	os.Unsetenv("GOEXPERIMENT")
}
