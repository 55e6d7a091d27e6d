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
		{"go1.27.3", "1.17", "-vet=atomic,bools,buildtag,directive,errorsas,ifaceassert,nilfunc,slog,stringintconv,tests"},
		{"go1.27.3", "1.22", "-vet=" + vetWithoutPrintf["go1.27"]},
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

// stdversion, in Go 1.27's list, checks nothing in a module older than Go
// 1.21: it stays out of the list there, and in it from 1.21 on.
func TestVetFlagLeavesStdversionOutBelowGo121(t *testing.T) {
	if f := vetFlag("go1.27.3", "1.20"); strings.Contains(f, "stdversion") || !strings.Contains(f, "errorsas") {
		t.Errorf("go 1.20: %q", f)
	}
	if f := vetFlag("go1.27.3", "1.22"); !strings.Contains(f, "stdversion") {
		t.Errorf("go 1.22: %q", f)
	}
}

// A -vet in GOFLAGS is one the user gave.
func TestVetInGoflags(t *testing.T) {
	for goflags, want := range map[string]bool{
		"-vet=off":              true,
		"-mod=mod --vet=atomic": true,
		"-race -vet=off -v":     true,
		"-mod=mod":              false,
		"":                      false,
		"-vettool=/x":           false,
	} {
		if got := vetInGoflags(goflags); got != want {
			t.Errorf("vetInGoflags(%q) = %v, want %v", goflags, got, want)
		}
	}
}
