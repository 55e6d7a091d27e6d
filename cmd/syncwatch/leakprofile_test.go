package main

import "testing"

func TestLeakProfileOnlyForGo126(t *testing.T) {
	for _, tc := range []struct {
		version, experiments, want string
		ok                         bool
	}{
		{"go1.26.8", "", "goroutineleakprofile", true},
		{"go1.26.0", "arenas", "arenas,goroutineleakprofile", true},
		{"go1.26.8", "goroutineleakprofile", "", false},
		{"go1.26.8", "nogoroutineleakprofile", "", false}, // turned off on purpose
		{"go1.27.3", "", "", false},                       // built in
		{"go1.25.14", "", "", false},                      // not there
	} {
		got, ok := leakProfileExperiments(tc.version, tc.experiments)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s with %q: %q, %v; want %q, %v", tc.version, tc.experiments, got, ok, tc.want, tc.ok)
		}
	}
}
