package main_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"go/version"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// binary is syncwatch, built once for the tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "syncwatch-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "syncwatch")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// syncwatch runs the command in testdata/dir against this checkout, and
// checks that no file of the testdata modules changed.
func syncwatch(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	return runIn(t, dir, env, append([]string{args[0], "-syncwatch", root}, args[1:]...)...)
}

// runIn runs the command in testdata/dir with args as given.
func runIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	before := snapshot(t, "testdata")
	cmd := exec.Command(binary, args...)
	cmd.Dir = filepath.Join("testdata", dir)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	assert.Equal(t, before, snapshot(t, "testdata"), "syncwatch changed a file of the module")
	return r
}

// snapshot returns a hash of every file under dir, by path.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	files := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = sha256.Sum256(data)
		return err
	})
	require.NoError(t, err)
	return files
}

// A correct module passes, with no report.
func TestCleanModulePasses(t *testing.T) {
	r := syncwatch(t, "clean", nil, "test", "-count=1", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/clean")
	assert.NotContains(t, r.stderr, "finding")
	assert.NotContains(t, r.stdout+r.stderr, "lockorder:")
}

// A module with an old go line keeps its GODEBUG defaults, although the
// temporary go.mod's go line is raised to syncwatch's: its test making a
// 512-bit key passes, as under go test (rsa1024min=0 before go 1.24).
func TestOldGoLineKeepsItsGodebugDefaults(t *testing.T) {
	r := syncwatch(t, "oldgo", nil, "test", "-count=1", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/oldgo")
}

// An old module's tests are vetted as go test vets them: the raised go
// line does not turn on printf's check of a message used as a format
// string (format_test.go, Go 1.24's), and go test's other default checks
// still run (errorsas, on vetbad.go).
func TestOldGoLineIsVettedAsGoTestVetsIt(t *testing.T) {
	r := syncwatch(t, "oldgo", nil, "test", "-count=1", "-run", "TestMessageAsFormat", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/oldgo")
	r = syncwatch(t, "oldgo", nil, "test", "-count=1", "-tags", "vetbad", "./...")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout+r.stderr, "vetbad.go:11:9: second argument to errors.As")
	// A -vet in GOFLAGS is the user's, as under go test.
	r = syncwatch(t, "oldgo", []string{"GOFLAGS=-vet=off"}, "test", "-count=1", "-tags", "vetbad", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
}

// Two tests that take the same two locks in opposite orders fail the run,
// and the summary names the cycle once, with its sites and test.
func TestInversionBetweenTwoTestsFails(t *testing.T) {
	r := syncwatch(t, "abba", nil, "test", "-count=1", "./...")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "syncwatch: 1 distinct finding(s)")
	assert.Contains(t, r.stderr, "1. lock-order-cycle: cycle of 2 locks: bank.Account.mu#2 -> bank.Account.mu#1 -> bank.Account.mu#2")
	assert.Contains(t, r.stderr, "at example.com/abba.Transfer")
	assert.Contains(t, r.stderr, "bank.go:17")
	assert.Contains(t, r.stderr, "seen in 1 test(s)")
}

// A module in a workspace (a go.work in force) is checked with its own
// go.mod, and syncwatch says so: go's -modfile, which syncwatch needs,
// cannot be used in workspace mode.
func TestWorkspaceModuleIsCheckedWithItsGoMod(t *testing.T) {
	r := syncwatch(t, "workspace/bank", nil, "test", "-count=1", "./...")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "go.work is left out (GOWORK=off)")
	assert.Contains(t, r.stderr, "1. lock-order-cycle: cycle of 2 locks: bank.Account.mu#2 -> bank.Account.mu#1 -> bank.Account.mu#2")
	assert.NotContains(t, r.stderr, "-modfile cannot be used")
}

// Two bugs through one helper, printed as two findings while the tests
// ran, are two findings in the summary too, though their locks and top
// sites are alike; each is named by the code that took its locks.
func TestSummaryKeepsDistinctCyclesThroughAHelper(t *testing.T) {
	r := syncwatch(t, "helper", nil, "test", "-count=1", "./...")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "syncwatch: 2 distinct finding(s)")
	summary := r.stderr[strings.Index(r.stderr, "distinct finding(s)"):]
	assert.Regexp(t, `1\. lock-order-cycle: cycle of 2 locks: helper\.withLock \(ledger\.go:15\) from \S*Transfer\.func\d \(ledger\.go:22\) -> `, summary)
	assert.Regexp(t, `2\. lock-order-cycle: cycle of 2 locks: helper\.withLock \(ledger\.go:15\) from \S*Audit\.func\d \(ledger\.go:28\) -> `, summary)
	assert.Contains(t, summary, "seen in 1 test(s): TestTransfer;")
	assert.Contains(t, summary, "seen in 1 test(s): TestAudit;")
}

// go test's flags pass through: -run picks one test, which passes alone;
// -json keeps stdout machine-readable, the summary going to stderr.
func TestGoTestFlagsPassThrough(t *testing.T) {
	r := syncwatch(t, "abba", nil, "test", "-count=1", "-run", "TestToSavings", "-json", ".")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	var tests []string
	for line := range strings.Lines(r.stdout) {
		var ev struct{ Action, Test string }
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		if ev.Action == "pass" && ev.Test != "" {
			tests = append(tests, ev.Test)
		}
	}
	assert.Equal(t, []string{"TestToSavings"}, tests)
}

// A package's own TestMain still runs, around the tests, and the binary
// is still checked after it.
func TestOwnTestMainRunsAndIsChecked(t *testing.T) {
	r := syncwatch(t, "testmain", nil, "test", "-count=1", "-v", ".")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "own TestMain: before")
	assert.Contains(t, r.stdout, "own TestMain: after")

	r = syncwatch(t, "testmain", []string{"PAIR_BA=1"}, "test", "-count=1", "-v", ".")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "own TestMain: after")
	assert.Contains(t, r.stderr, "1. lock-order-cycle: cycle of 2 locks: pair.b -> pair.a -> pair.b")
	assert.Contains(t, r.stderr, "TestBA")
}

// The exit code the package's own TestMain chose is kept.
func TestOwnTestMainExitCodeKept(t *testing.T) {
	r := syncwatch(t, "testmain", []string{"PAIR_EXIT=1"}, "test", "-count=1", "-v", ".")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "own TestMain: after")
	assert.Contains(t, r.stdout, "FAIL\texample.com/testmain")
	assert.NotContains(t, r.stderr, "finding")
}

// A cycle whose other half is a dependency's lock is found with -deps
// only; without it, a lock passed to the dependency's API typed
// *sync.Mutex stays sync, said once with its site. Files under a build
// tag are rewritten when the tag is given.
func TestDepsFindsCycleInDependency(t *testing.T) {
	r := syncwatch(t, "app", nil, "test", "-count=1", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "app.go:37:15: stays sync: it meets extlib.mu (*sync.Mutex)"), r.stderr)

	r = syncwatch(t, "app", nil, "test", "-count=1", "-deps", "./...")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "1. lock-order-cycle")
	assert.Contains(t, r.stderr, "locks: extlib.libMu, app.mu")
	assert.Contains(t, r.stderr, "extlib.go:11")
	assert.NotContains(t, r.stderr, "stays sync")

	r = syncwatch(t, "app", nil, "test", "-count=1", "-tags", "apptag", "-run", "Tagged", "-v", ".")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "--- PASS: TestTagged")
}

// golang.org/x/sync, which syncwatch's own module requires, is rewritten
// with -deps like any dependency (only the modules lockorder imports are
// left alone): errgroup's Wait then orders its tasks' locks before what
// follows it, as a WaitGroup's does, and phases of an errgroup are no
// cycle.
func TestDepsRewritesErrgroup(t *testing.T) {
	r := syncwatch(t, "errgroupapp", nil, "test", "-count=1", "-deps", ".")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.NotContains(t, r.stderr, "lock-order-cycle")
	assert.Contains(t, r.stdout, "ok  \texample.com/errgroupapp")
}

// A cycle with the lock of a dependency that comes from the module cache
// (not a replaced directory) is found with -deps; the cache stays as it
// was, though it is writable (-modcacherw) and the rewrite works on hard
// links to it; the summary names the dependency's file in the cache.
func TestDepsFromModuleCache(t *testing.T) {
	cache, env := moduleCache(t, "extlib", "example.com/extlib", "v1.0.0")
	dir := filepath.Join(cache, "example.com", "extlib@v1.0.0")
	before := snapshot(t, dir)

	r := syncwatch(t, "cacheapp", env, "test", "-count=1", "-deps", ".")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "syncwatch: 1 distinct finding(s)")
	assert.Contains(t, r.stderr, "locks: extlib.libMu, cacheapp.registry.mu")
	assert.Contains(t, r.stderr, "at example.com/extlib.WithLib ("+filepath.Join(dir, "extlib.go")+":11)")
	assert.Equal(t, before, snapshot(t, dir), "syncwatch changed the module cache")
}

// moduleCache serves testdata/dir as module path@version from a file
// proxy, downloads it into a new module cache with go mod download, and
// returns the cache and the environment that uses them. Other modules
// (syncwatch's requirements) come from the usual cache, as a proxy.
func moduleCache(t *testing.T, dir, path, version string) (string, []string) {
	t.Helper()
	proxy := t.TempDir()
	at := filepath.Join(proxy, filepath.FromSlash(path), "@v")
	require.NoError(t, os.MkdirAll(at, 0o755))
	var z bytes.Buffer
	require.NoError(t, zip.CreateFromDir(&z, module.Version{Path: path, Version: version}, filepath.Join("testdata", dir)))
	mod, err := os.ReadFile(filepath.Join("testdata", dir, "go.mod"))
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		version + ".zip":  z.Bytes(),
		version + ".mod":  mod,
		version + ".info": []byte(`{"Version":"` + version + `"}`),
		"list":            []byte(version + "\n"),
	} {
		require.NoError(t, os.WriteFile(filepath.Join(at, name), data, 0o644))
	}
	usual, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	cache := t.TempDir()
	env := []string{
		"GOMODCACHE=" + cache,
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(strings.TrimSpace(string(usual)), "cache", "download")),
		"GOSUMDB=off",
		"GOFLAGS=-modcacherw", // so that t.TempDir can remove it
	}
	cmd := exec.Command("go", "mod", "download", path+"@"+version)
	cmd.Dir, cmd.Env = cache, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return cache, env
}

// go vet runs as go test runs it, and its copylocks check, asked for,
// still sees the swapped locks as locks: a copy of one fails the build,
// at the original line.
func TestVetSeesSwappedLocks(t *testing.T) {
	r := syncwatch(t, "clean", nil, "test", "-count=1", "-vet=copylocks", "-tags", "copylock", ".")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "copylock.go:7:44: return copies lock value: example.com/clean.Counter")
}

// syncwatch run runs a program in check mode by default, with its
// arguments; -mode off turns the checks off.
func TestRunProgram(t *testing.T) {
	r := syncwatch(t, "abba", nil, "run", "./cmd/cross", "x", "-y")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "done [x -y]")
	assert.Contains(t, r.stderr, "lock-order-cycle")

	r = syncwatch(t, "abba", nil, "run", "-mode", "off", "./cmd/cross")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.NotContains(t, r.stderr, "lock-order-cycle")
}

// Usage errors exit 2 and say why.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"test", "-modfile=x"}, {"test", "-mod=readonly"}, {"run", "-mode", "loud", "."}} {
		r := syncwatch(t, "abba", nil, args...)
		assert.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "usage:")
	}
}

// A development build, whose version is unknown, uses the checkout it was
// built from, and says so.
func TestDevelopmentBuildUsesItsCheckout(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	r := runIn(t, "clean", nil, "test", "-count=1", ".")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "syncwatch: a development build: using the checkout it was built from, "+root)
}

// A test that deadlocks fails at once, without a timeout, and the
// summary names the deadlock although it ended its test binary: the
// runtime proves it (Go 1.27, and Go 1.26, which syncwatch test builds
// with the runtime's leak detection). Go 1.25 cannot: the deadlock is
// reported on evidence, printed in full, and the test ends at its
// -timeout, as with sync; the summary still names it.
func TestDeadlockFailsWithoutTimeout(t *testing.T) {
	if version.Compare(runtime.Version(), "go1.26") < 0 {
		r := syncwatch(t, "hang", nil, "test", "-count=1", "-timeout=20s", ".")
		assert.Equal(t, 1, r.code, r.stdout+r.stderr)
		assert.Contains(t, r.stdout, "evidence: every goroutine")
		assert.Contains(t, r.stdout, "test timed out")
		assert.Contains(t, r.stderr, "1. deadlock: cycle of 2 goroutines blocked, as is every goroutine of the program")
		assert.Contains(t, r.stderr, "hang.Store.log#1")
		assert.Contains(t, r.stderr, "ran into its -timeout")
		return
	}
	r := syncwatch(t, "hang", nil, "test", "-count=1", ".")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "*** DEADLOCK ***")
	assert.Contains(t, r.stderr, "1. deadlock: cycle of 2 goroutines blocked for good")
	assert.Contains(t, r.stderr, "hang.Store.log#1")
	assert.NotContains(t, r.stdout, "test timed out")
}

// Under Go 1.26 syncwatch test builds with the runtime's leak detection
// (GOEXPERIMENT=goroutineleakprofile), and the test binaries run with the
// user's own GOEXPERIMENT, for the go commands they may run.
func TestGoExperimentForTheBuildOnly(t *testing.T) {
	leaks := "0"
	if version.Compare(runtime.Version(), "go1.26") >= 0 {
		leaks = "1"
	}
	if os.Getenv("GOEXPERIMENT") != "" {
		t.Skip("GOEXPERIMENT is set for this test")
	}
	r := syncwatch(t, "goexperiment", []string{"WANT_GOEXPERIMENT=unset", "WANT_LEAKS=" + leaks}, "test", "-count=1", ".")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
}

// A TestMain that hands m to a harness which exits by itself (as
// goleak.VerifyTestMain does) keeps its harness, and is still checked.
func TestHarnessThatExitsIsChecked(t *testing.T) {
	r := syncwatch(t, "testmain", nil, "test", "-count=1", "./viaharness")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)

	r = syncwatch(t, "testmain", []string{"PAIR_BA=1"}, "test", "-count=1", "-v", "./viaharness")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "harness: after")
	assert.Contains(t, r.stderr, "1. lock-order-cycle: cycle of 2 locks: viaharness.second -> viaharness.first -> viaharness.second")
}

// A module with a vendor directory is built from it, offline (its
// library is in no proxy or cache): its own packages are rewritten, and
// with -deps the vendored library too, so a cycle through the library's
// lock is found. Locks in fields of unnamed struct types are named after
// them. Nothing under vendor/ is written.
func TestVendoredModule(t *testing.T) {
	offline := []string{"GOPROXY=off"}
	r := syncwatch(t, "vendored", offline, "test", "-count=1", ".")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/vendored")
	assert.NotContains(t, r.stderr, "finding")

	r = syncwatch(t, "vendored", append(offline, "VENDORED_BA=1"), "test", "-count=1", "-mod=vendor", "-deps", ".")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "syncwatch: 2 distinct finding(s)")
	assert.Contains(t, r.stderr, "locks: vendored.stats.mu, vendored.cache.Mutex")
	assert.Contains(t, r.stderr, "locks: vendored.cache.Mutex, vlib.state.mu")
	assert.Contains(t, r.stderr, filepath.Join("vendor", "example.com", "vlib", "vlib.go")+":14")
}

// -mod=vendor in a module without a vendor directory is an error, said
// before anything builds; -mod takes vendor or mod only.
func TestModFlag(t *testing.T) {
	r := syncwatch(t, "clean", nil, "test", "-mod=vendor", ".")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "syncwatch: -mod=vendor: no vendor/modules.txt")
	assert.Empty(t, r.stdout)
}

// go test's result cache works across runs, as with go test: a package
// that passed and has not changed is not run again.
func TestPassingResultsAreCached(t *testing.T) {
	syncwatch(t, "clean", nil, "test", ".")
	r := syncwatch(t, "clean", nil, "test", ".")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/clean\t(cached)")
}

// A Go file that a //go:embed embeds keeps its bytes: it is not rewritten,
// what it declares stays sync, and so does what flows to it from the
// files that are (a lock passed to its function); the summary says so.
func TestEmbeddedGoFileKeepsItsBytes(t *testing.T) {
	r := syncwatch(t, "embedself", nil, "test", "-count=1", "./...")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "ok  \texample.com/embedself")
	assert.Contains(t, r.stderr, "store.go: stays sync: a //go:embed embeds this file")
	assert.NotContains(t, r.stderr, "counter.go", "only the embedded file is named")
}
