package main

import (
	"go/version"
	"os/exec"
	"slices"
	"strings"
)

// printfGoLine is the Go version from which vet's printf check reports a
// non-constant format string with no other argument (t.Errorf(msg)): only
// in files whose language version is that or newer.
const printfGoLine = "go1.24"

// vetWithoutPrintf are go test's default vet checks (cmd/go's
// defaultVetFlags), per release, less printf.
var vetWithoutPrintf = map[string]string{
	"go1.25": "atomic,bool,buildtags,directive,errorsas,ifaceassert,nilfunc,slog,stringintconv,tests",
	"go1.26": "atomic,bool,buildtags,directive,errorsas,ifaceassert,nilfunc,slog,stringintconv,tests",
	"go1.27": "atomic,bools,buildtag,directive,errorsas,ifaceassert,nilfunc,slog,stdversion,stringintconv,tests",
}

// vetFlag returns the -vet flag syncwatch test gives go test for a module
// whose go.mod says go goLine ("" if it has no go line), run by the go
// command of release goVersion; "" for none. The temporary go.mod raises
// a go line older than syncwatch's (Go 1.25), and with it the language
// version vet sees: for a module older than Go 1.24 that would turn on
// printf's check of non-constant format strings, which go test does not
// run on it, and fail to build tests that pass under go test. So such a
// module's tests are vetted with go test's other default checks, without
// printf. A release syncwatch does not know keeps go test's default.
//
// stdversion (Go 1.27's list) checks nothing in a module older than Go
// 1.21, and would with the raised line: it is left out there too.
func vetFlag(goVersion, goLine string) string {
	if goLine == "" {
		goLine = "1.16" // the go command's assumption for a go.mod without one
	}
	if version.IsValid("go"+goLine) && version.Compare("go"+goLine, printfGoLine) >= 0 {
		return ""
	}
	checks, ok := vetWithoutPrintf[version.Lang(strings.TrimSpace(goVersion))]
	if !ok {
		return ""
	}
	if version.Compare("go"+goLine, stdversionGoLine) < 0 {
		checks = strings.Join(slices.DeleteFunc(strings.Split(checks, ","), func(c string) bool { return c == "stdversion" }), ",")
	}
	return "-vet=" + checks
}

// stdversionGoLine is the Go version from which vet's stdversion check
// looks at a package: it skips those of older modules.
const stdversionGoLine = "go1.21"

// vetInGoflags reports whether GOFLAGS (the environment's, or go env
// -w's) sets -vet: a -vet the user gave, which syncwatch leaves alone.
func vetInGoflags(goflags string) bool {
	for _, f := range strings.Fields(goflags) {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if strings.HasPrefix(f, "-") && name == "vet" {
			return true
		}
	}
	return false
}

// goVersion returns the go command's release ("go1.26.3"), "" if it
// cannot say.
func goVersion() string {
	v, _ := goEnv2("GOVERSION", "GOFLAGS")
	return v
}

// goEnv2 returns the go command's settings of two variables, "" if it
// cannot say.
func goEnv2(a, b string) (string, string) {
	out, err := exec.Command("go", "env", a, b).Output()
	if err != nil {
		return "", ""
	}
	x, y, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(x), strings.TrimSpace(y)
}

// testVetFlag is vetFlag for the go command as it is set up here: "" if
// GOFLAGS sets -vet.
func testVetFlag(goLine string) string {
	v, goflags := goEnv2("GOVERSION", "GOFLAGS")
	if vetInGoflags(goflags) {
		return ""
	}
	return vetFlag(v, goLine)
}
