package main

import (
	"go/version"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/syncwatch/syncwatch/lockorder"
)

// leakExperiment gives Go 1.26 the runtime's leak detection, which Go 1.27
// has built in: lockorder acts on a deadlock (DeadlockPanic, the default
// under go test) only on its proof, so that with it a test that deadlocks
// fails in seconds rather than at its -timeout (docs/RULES.md W1).
const leakExperiment = "goroutineleakprofile"

// withLeakProfile returns env, to run the go command with, plus, under Go
// 1.26, the experiment that gives it the runtime's leak detection, unless
// GOEXPERIMENT already names it (or turns it off, "no" before its name),
// and the user's own GOEXPERIMENT for the binaries to put back.
// The first build with it compiles the standard library and every
// dependency again, once; the build cache keeps them.
func withLeakProfile(env []string) []string {
	out, err := exec.Command("go", "env", "GOVERSION", "GOEXPERIMENT").Output()
	if err != nil {
		return env
	}
	goVersion, experiments, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	v, ok := leakProfileExperiments(goVersion, experiments)
	if !ok {
		return env
	}
	// The binaries put the user's own setting back (lockorder's
	// initialisation), for the go commands they run.
	orig := ""
	if e, set := os.LookupEnv("GOEXPERIMENT"); set {
		orig = "=" + e
	}
	return append(env, "GOEXPERIMENT="+v, lockorder.GoExperimentEnv+"="+orig)
}

// leakProfileExperiments returns the GOEXPERIMENT setting that adds the
// leak detection to experiments, for the go command of release goVersion,
// and whether one is needed.
func leakProfileExperiments(goVersion, experiments string) (string, bool) {
	if version.Lang(strings.TrimSpace(goVersion)) != "go1.26" {
		return "", false
	}
	var exps []string
	if e := strings.TrimSpace(experiments); e != "" {
		exps = strings.Split(e, ",")
	}
	if slices.Contains(exps, leakExperiment) || slices.Contains(exps, "no"+leakExperiment) {
		return "", false
	}
	return strings.Join(append(exps, leakExperiment), ","), true
}
