// Command syncwatch runs a module's tests, or a program, with sync's locks
// swapped for lockorder's, without editing a file.
//
//	go install github.com/syncwatch/syncwatch/cmd/syncwatch@latest
//	cd your/module
//	syncwatch test ./...
//
// # syncwatch test
//
//	syncwatch test [-syncwatch DIR] [-deps] [-mod vendor|mod] [-keep] [go test flags] [packages]
//
// runs go test on the module in the current directory with sync.Mutex,
// RWMutex, Once, WaitGroup, Cond and NewCond replaced by lockorder's in
// the module's packages, test files included. Every test binary is
// checked as lockordertest.VerifyTestMain checks it: a lock-order cycle,
// recursive lock, bad unlock, deadlock or goroutine blocked at exit fails
// the run; a deadlock the runtime proves fails it at once, without a
// timeout, if it holds up a test (a goroutine left blocked for good
// that nothing waits for is a leak, reported when the tests end). Under Go 1.26, syncwatch test builds with
// GOEXPERIMENT=goroutineleakprofile, which gives the runtime the leak
// detection Go 1.27 has built in (the first build compiles the standard
// library and the dependencies again; GOEXPERIMENT=nogoroutineleakprofile
// turns it off); the test binaries run with the user's own GOEXPERIMENT,
// for the go commands they run. With it, as on Go 1.27, a goroutine a test
// leaves blocked for good (on a channel nobody can send on) is reported at
// exit as leaked-goroutine. Without the runtime's proof (Go 1.25, or a lock
// a global variable reaches), a deadlock is reported in full within
// seconds on the evidence that every goroutine is blocked, which a timer
// could still prove wrong, and the test ends at its -timeout, as with sync;
// the summary names it. At the end
// syncwatch prints each distinct finding once, across
// all packages: its kind, its locks, its code sites, and the tests and
// instances that showed it (the goroutines leaked at one place, each
// reported in its test, are one finding); the exit status is non-zero if
// there was one.
//
// go test's flags pass through (-run, -count, -race, -timeout, -v, -json,
// -tags, ...). The summary goes to standard error, so that with -json
// standard output stays go test's. Arguments after -args go to the test
// binaries.
//
// A package with its own TestMain keeps it: it is renamed and run by a
// generated TestMain, and the check comes after it. Its os.Exit calls end
// it with their code, which stands unless the check fails. A harness it
// hands m to, which exits by itself (goleak.VerifyTestMain(m)), gets m
// wrapped, so that the check runs inside the harness's m.Run. An os.Exit
// in a helper that TestMain calls ends the binary unchecked. A package
// without a TestMain gets one generated, so its tests run three frames
// deeper (the generated TestMain and two of lockordertest's sit between
// main.main and testing.(*M).Run): an Example whose output prints its own
// call stack down to main.main sees them, and fails.
//
// A lock that has been used holds a pointer to its identity, which sync's
// does not: a test comparing structs that hold used locks with
// reflect.DeepEqual or testify's assert.Equal, or printing them with %+v
// into golden output, sees them differ.
//
// # How it works, and what it never does
//
// syncwatch never writes the module's files, go.mod or go.sum. It loads
// the packages with their types (golang.org/x/tools/go/packages), writes
// rewritten copies of the files that name a swapped type to a temporary
// directory, and runs go test with -overlay (the copies stand in for the
// originals) and -modfile (a temporary go.mod, the module's own plus a
// requirement on syncwatch). Edits stay on their line, so reports, stacks
// and compiler errors name the original lines.
//
// The rewrite follows the types: import aliases and dot-imports, embedded
// locks (promoted Lock and Unlock keep working), composite literals, new,
// Locker values, NewCond on a mutex or an RLocker, method expressions
// ((*sync.Mutex).Lock, swapped with the locks they are called on). Files the type checker
// did not see (other build tags, cgo) are rewritten on their syntax. A
// value that meets code which is not rewritten, such as a *sync.Mutex
// passed to another module's function, stays sync, with every variable,
// field and parameter it flows through; syncwatch says so once per site.
// A Go file that a //go:embed embeds is not rewritten, since the overlay
// would stand for it in the embedded copy too: what it declares stays
// sync, as does what its values flow to, and syncwatch names the file.
//
// A lock is named in reports after its declaration, where the code that
// locks it says which: a package-level variable ("pkg.mu"), a field of a
// named struct type ("bbolt.DB.mmaplock", generic types included), a
// field of an unnamed struct after what holds it ("pkg.cache.Mutex",
// "pkg.store.inner.mu"), a local variable after its function
// ("pkg.TestX.mu"), the locks of an array or slice after it. Its Lock
// calls first put it in that class, through lockorder's SetClassIfNew.
// A lock first locked otherwise (through a parameter, a local pointer, a
// Locker) is named after the code that first locks it.
//
// A module with a vendor directory is built from it, offline, as go test
// would build it (-mod=vendor): the temporary go.mod replaces each
// vendored module with its directory under vendor/, which gets a go.mod
// through the overlay; syncwatch itself comes from -syncwatch DIR or the
// module cache. With -deps the vendored packages are rewritten too.
// -mod=mod builds from the module cache instead. The -modfile and
// -overlay flags are syncwatch's.
//
// In a workspace (a go.work file in force), the module is built with its
// own go.mod, since go's -modfile cannot be used in workspace mode:
// syncwatch sets GOWORK=off for its run, and says so. Its go.mod must
// then require, or replace, every module the workspace supplies, as a
// module that is also built outside its workspace does.
//
// The temporary go.mod raises the module's go line to syncwatch's when it
// is older (Go 1.25), as the go command requires; for modules older than
// Go 1.22 that gives loop variables per-iteration scope. GODEBUG's defaults
// stay those of the module's own go line (a "godebug default=go1.N" line,
// unless its go.mod sets one), so that, for one, an old module's 512-bit
// test certificates still verify. A module older than Go 1.24 is vetted
// with go test's default checks less printf (-vet=atomic,bool,...), unless
// -vet is given: the raised go line would turn on printf's check of a
// message used as a format string (t.Errorf(msg)), which go test does not
// run on such a module, and fail tests that pass under go test.
//
// # Flags
//
//	-syncwatch DIR
//		Use the syncwatch checkout in DIR (a replace in the temporary
//		go.mod), for development and offline use. By default syncwatch
//		uses the version it was built from; a development build, whose
//		version is unknown, uses the checkout it was built from, and says so.
//	-deps
//		Rewrite every dependency module too (from the module cache or a
//		replaced directory), except the standard library and the modules
//		lockorder itself imports, so that a cycle between the module's
//		lock and a dependency's is found, and the order a dependency's
//		WaitGroup gives is seen: without it, the tasks of an errgroup
//		(golang.org/x/sync) are not known to end before its Wait
//		returns, and locks taken in both orders on the two sides of the
//		Wait are reported as a cycle. A module of the
//		module cache is rewritten in a copy, never in the cache; the
//		summary names its files by their place in the cache.
//	-mod vendor|mod
//		Where the vendored modules come from: vendor/ (the default
//		when there is one) or the module cache.
//	-keep
//		Keep the temporary directory (rewritten files, go.mod, overlay)
//		and print its path.
//
// Otherwise the temporary directory is removed when the command ends,
// also when it is stopped: SIGINT and SIGTERM are passed on to go test
// and its test binaries (unless the input is a terminal, whose Ctrl-C
// reaches them anyway), and the command exits with 128 and the signal's
// number, as a shell would. A directory left by a command killed outright
// (SIGKILL) is removed by the next one, which can tell it from a running
// command's (on Unix, by a lock the running command holds).
//
// # syncwatch run
//
//	syncwatch run [-syncwatch DIR] [-deps] [-mod vendor|mod] [-keep] [-mode check|trace|off] [go build flags] package [arguments]
//
// runs a program the same way, through go run, in the mode -mode names
// (default check; it sets SYNCWATCH_MODE). Reports are printed as they
// happen, by lockorder's default handler.
//
// # Cost
//
// The rewrite costs a type-check of the module's packages (about as long
// as go vet); the swapped locks cost what lockorder costs in check mode.
// With -deps, or with a go command newer than the importer this command
// was built with reads (Go 1.27), every package is type-checked from
// source, which takes seconds more. SYNCWATCH_TIMING=1 prints how long
// the rewrite took. README.md states what syncwatch test added on a real
// suite.
package main
