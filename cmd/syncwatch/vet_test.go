package main

import (
	"slices"
	"strings"
	"testing"
)

func TestVetFlag(t *testing.T) {
	for _, c := range []struct{ goVersion, goLine, want string }{
		{"go1.26.3", "1.20", "-vet=" + vetWithoutPrintf["go1.26"]},
		{"go1.26.3", "", "-vet=" + vetWithoutPrintf["go1.26"]}, // no go line: 1.16
		{"go1.26.3", "1.23.4", "-vet=" + vetWithoutPrintf["go1.26"]},
		{"go1.25.14", "1.21", "-vet=" + vetWithoutPrintf["go1.25"]},
		{"go1.27.3", "1.17", "-vet=" + vetWithoutPrintf["go1.27"]},
		{"go1.26.3", "1.24", ""},   // printf's check runs under go test too
		{"go1.26.3", "1.25.0", ""}, // not raised
		{"go1.29.1", "1.20", ""},   // a release syncwatch does not know
		{"", "1.20", ""},
	} {
		if got := vetFlag(c.goVersion, c.goLine); got != c.want {
			t.Errorf("vetFlag(%q, %q) = %q, want %q", c.goVersion, c.goLine, got, c.want)
		}
	}
}

// The checks left are go test's default ones less printf: the lists name
// no printf, and each has go test's other checks of its release.
func TestVetWithoutPrintfIsGoTestsDefaultLessPrintf(t *testing.T) {
	for rel, checks := range vetWithoutPrintf {
		for _, want := range []string{"atomic", "directive", "errorsas", "ifaceassert", "nilfunc", "slog", "stringintconv", "tests"} {
			if !slices.Contains(strings.Split(checks, ","), want) {
				t.Errorf("%s: %s lacks %s", rel, checks, want)
			}
		}
		if slices.Contains(strings.Split(checks, ","), "printf") {
			t.Errorf("%s: %s has printf", rel, checks)
		}
	}
}
