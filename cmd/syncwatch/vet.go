package main

import (
	"go/version"
	"os/exec"
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
	return "-vet=" + checks
}

// goVersion returns the go command's release ("go1.26.3"), "" if it
// cannot say.
func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
