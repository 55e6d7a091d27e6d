package goexperiment

import (
	"os"
	"runtime/pprof"
	"testing"
)

// The binary runs with the GOEXPERIMENT the user had (WANT_GOEXPERIMENT:
// "unset", or the value), whatever syncwatch built it with, and has the
// runtime's leak detection if WANT_LEAKS says so.
func TestEnvironment(t *testing.T) {
	Do()
	got, set := os.LookupEnv("GOEXPERIMENT")
	switch want := os.Getenv("WANT_GOEXPERIMENT"); {
	case want == "unset" && set:
		t.Errorf("GOEXPERIMENT=%q, want it unset", got)
	case want != "unset" && got != want:
		t.Errorf("GOEXPERIMENT=%q, want %q", got, want)
	}
	if leaks := pprof.Lookup("goroutineleak") != nil; leaks != (os.Getenv("WANT_LEAKS") == "1") {
		t.Errorf("the runtime's leak detection: %v, want %v", leaks, !leaks)
	}
}
