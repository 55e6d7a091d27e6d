package swap_test

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"go/version"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"

	"github.com/syncwatch/syncwatch/cmd/syncwatch/internal/swap"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sourceDeps is packages.NeedDeps (type-check dependencies from source)
// on Go releases whose export data the importer cannot read, as
// syncwatch itself does.
func sourceDeps() packages.LoadMode {
	if version.Compare(version.Lang(runtime.Version()), "go1.26") > 0 {
		return packages.NeedDeps
	}
	return 0
}

// rewriteDir loads the packages under dir (a module, or a directory of
// this one), rewrites every file that is not rewritten to go to a package
// named in foreign, and returns the output by file name, and the notes.
func rewriteDir(t *testing.T, dir string, foreign ...string) (map[string][]byte, []string) {
	t.Helper()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedTypes | packages.NeedSyntax |
			packages.NeedTypesInfo | packages.NeedImports,
		Dir:   dir,
		Tests: true,
	}
	cfg.Mode |= sourceDeps()
	pkgs, err := packages.Load(cfg, "./...")
	require.NoError(t, err)
	var chosen []*packages.Package
	for _, p := range pkgs {
		require.Empty(t, p.Errors, p.ID)
		if !slices.Contains(foreign, p.Name) && !strings.HasSuffix(p.ID, ".test") {
			chosen = append(chosen, p)
		}
	}
	require.NotEmpty(t, chosen)
	an := swap.NewAnalysis(chosen[0].Fset, func(path string) bool { return !slices.Contains(foreign, filepath.Base(path)) })
	for _, p := range chosen {
		an.AddPackage(p.Syntax, p.TypesInfo)
	}
	an.Solve()
	out := map[string][]byte{}
	for _, p := range chosen {
		for _, f := range p.Syntax {
			name := p.Fset.File(f.Package).Name()
			if _, done := out[name]; done {
				continue
			}
			src, err := os.ReadFile(name)
			require.NoError(t, err)
			res, err := swap.Rewrite(swap.File{Fset: p.Fset, AST: f, Src: src, Info: p.TypesInfo, Keep: an.Keep, Swapped: an.Swapped, WrapTestMain: strings.HasSuffix(name, "_test.go")})
			require.NoError(t, err)
			out[name] = res.Src
		}
	}
	return out, an.Notes
}

// checkGolden compares each output with name+".golden", and checks that
// it parses and keeps every line where it was.
func checkGolden(t *testing.T, out map[string][]byte) {
	t.Helper()
	for name, got := range out {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		_, err = parser.ParseFile(token.NewFileSet(), name, got, parser.ParseComments)
		assert.NoError(t, err, "rewritten %s does not parse", name)
		assert.Equal(t, strings.Count(string(src), "\n"), strings.Count(string(got), "\n"), "%s: lines moved", name)
		golden := name + ".golden"
		if *update {
			require.NoError(t, os.WriteFile(golden, got, 0o644))
			continue
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s differs from its golden file (go test -update)", name)
	}
}

// An import alias, an embedded lock with promoted methods, composite
// literals, new, NewCond on an RLocker, Locker values and a local name
// that shadows the import: the sync names are swapped, nothing else.
func TestRewriteAliases(t *testing.T) {
	out, notes := rewriteDir(t, "testdata/aliases")
	assert.Empty(t, notes)
	checkGolden(t, out)
}

// A dot-import keeps the import when Locker is still used through it, and
// is blanked when nothing else uses it.
func TestRewriteDotImport(t *testing.T) {
	out, _ := rewriteDir(t, "testdata/dotimport")
	checkGolden(t, out)
}

// A package's own TestMain is renamed and its os.Exit calls handed to the
// generated TestMain; a file with nothing to swap is left as it was.
func TestRewriteTestMain(t *testing.T) {
	out, _ := rewriteDir(t, "testdata/testmain")
	checkGolden(t, out)
	main := swap.TestMainFile("tm", true)
	assert.Contains(t, string(main), "syncwatchUserTestMain(w.m)")
	assert.Contains(t, string(main), "RunAndVerify(c.m)")
	_, err := parser.ParseFile(token.NewFileSet(), "main_test.go", main, 0)
	assert.NoError(t, err)
	_, err = parser.ParseFile(token.NewFileSet(), "main_test.go", swap.TestMainFile("tm", false), 0)
	assert.NoError(t, err)
}

// A TestMain that hands m to a harness taking an interface hands it a
// wrapper that checks the tests instead; a helper typed *testing.M gets m.
func TestRewriteHarness(t *testing.T) {
	out, _ := rewriteDir(t, "testdata/harness")
	checkGolden(t, out)
	got := string(out[mustAbs(t, "testdata/harness/h_test.go")])
	assert.Contains(t, got, "VerifyTestMain(syncwatchChecked{m}, 1)")
	assert.Contains(t, got, "_ = direct(m)")
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	return abs
}

// A lock passed to an API typed *sync.Mutex of a package that is not
// rewritten stays sync, and so does every variable and parameter it flows
// through; the note names the site once.
func TestRewriteKeepsWhatMeetsForeignCode(t *testing.T) {
	out, notes := rewriteDir(t, "testdata/keep", "lib")
	checkGolden(t, out)
	require.Len(t, notes, 8)
	assert.Contains(t, notes[0], "app.go:15:12: stays sync")
	assert.Contains(t, notes[0], "it meets lib.mu (*sync.Mutex)")
	assert.Contains(t, notes[1], "app.go:19:7: stays sync: it meets lib.(a result) (*sync.Mutex)")
	assert.Contains(t, notes[2], "app.go:25:44: stays sync")
	// A pointer field kept as sync is locked as sync, never named (the
	// naming helper takes lockorder's locks).
	got := string(out[mustAbs(t, "testdata/keep/app/app.go")])
	assert.Contains(t, got, "\tv.mu.Lock()\n")
	// So is a field of a generic type, in every instance.
	assert.Contains(t, notes[5], "app.go:51:12: stays sync")
	assert.Contains(t, got, "\tb.mu.Lock()\n")
	// A result of a call of several (m, err := lib.Two()), and a value
	// ranged over (for _, mu := range lib.Locks), carry what they are
	// assigned to.
	assert.Contains(t, notes[6], "app.go:57:12: stays sync: it meets lib.(a result)")
	assert.Contains(t, notes[7], "app.go:68:21: stays sync: it meets lib.Locks")
	assert.Contains(t, got, "\tvar held *sync.Mutex\n")
}

// A file the type checker does not see (another build tag) is rewritten
// on its syntax.
func TestRewriteUntyped(t *testing.T) {
	name := "testdata/tagged/other.go"
	src, err := os.ReadFile(name)
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	require.NoError(t, err)
	res, err := swap.Rewrite(swap.File{Fset: fset, AST: f, Src: src})
	require.NoError(t, err)
	assert.True(t, res.Changed)
	checkGolden(t, map[string][]byte{name: res.Src})
}

// A lock known by its field or package-level variable is named after it
// where it is locked, through the package's helpers; one kept as sync, or
// held through a pointer, is not.
func TestLocksNamedAfterDeclaration(t *testing.T) {
	out, _ := rewriteDir(t, "testdata/names")
	checkGolden(t, out)
	src := swap.NamesSource("names")
	_, err := parser.ParseFile(token.NewFileSet(), swap.NamesFile, src, 0)
	assert.NoError(t, err)
	assert.Contains(t, string(src), "m.SetClassIfNew(name)")
}

// names is testdata/names rewritten, by file name, loaded once.
var names struct {
	sync.Once
	out map[string][]byte
}

// namedFile returns a file of testdata/names, rewritten.
func namedFile(t *testing.T, name string) string {
	t.Helper()
	names.Do(func() { names.out, _ = rewriteDir(t, "testdata/names") })
	got := names.out[mustAbs(t, filepath.Join("testdata/names", name))]
	require.NotEmpty(t, got, "testdata/names did not load")
	return string(got)
}

// assertNamed checks that each of locks (the text that denotes a lock at
// a Lock call) is named as given in shapes.go.
func assertNamed(t *testing.T, locks ...string) {
	t.Helper()
	got := namedFile(t, "shapes.go")
	for i := 0; i+1 < len(locks); i += 2 {
		assert.Contains(t, got, fmt.Sprintf("(%s, %q).", locks[i], locks[i+1]))
	}
}

// A package-level variable of an unnamed struct type names the lock it
// holds, embedded or as a field.
func TestLockNamedInUnnamedStructVariable(t *testing.T) {
	assertNamed(t, "&cache.Mutex", "names.cache.Mutex", "&conf.mu", "names.conf.mu")
}

// A field of an unnamed struct type inside a named one is named after the
// named type's field.
func TestLockNamedInUnnamedStructField(t *testing.T) {
	assert.Contains(t, namedFile(t, "names.go"), `syncwatchNamedMutex(&s.inner.mu, "names.store.inner.mu").Lock()`)
}

// A lock promoted through two embedded structs is named after the type
// that declares it, and selected explicitly where it is locked.
func TestLockNamedThroughEmbeddedStructs(t *testing.T) {
	assertNamed(t, "&o.store.Mutex", "names.store.Mutex", "&o.revMu", "names.store.revMu")
}

// The locks of an array or slice are named after it; each is still its
// own lock (an instance of the class).
func TestLockNamedInArrayOrSlice(t *testing.T) {
	assertNamed(t, "&o.shards[1]", "names.outer.shards", "o.lanes[0]", "names.outer.lanes")
}

// A field of a generic type is named after the type, in every instance.
func TestLockNamedInGenericType(t *testing.T) {
	assertNamed(t, "&b.mu", "names.box.mu")
}

// A lock held by a local variable is named after its function (or
// method), in a closure too, and through an unnamed struct.
func TestLocalLockNamedAfterFunction(t *testing.T) {
	assertNamed(t, "&local", "names.shapes.local", "&group.mu", "names.shapes.group.mu",
		"&inMethod", "names.store.method.inMethod")
}

// A parameter, or a local pointer, may denote a lock declared elsewhere:
// it is left to be named by its declaration or its first use.
func TestParameterAndLocalPointerNotNamed(t *testing.T) {
	got := namedFile(t, "shapes.go")
	assert.Contains(t, got, "\tparam.Lock()")
	assert.Contains(t, got, "\talias.Lock()")
}

// A method expression of a swapped type, (*sync.Mutex).Lock, is swapped
// with the locks it is called on, directly or through a variable, an
// argument or a field of its func type: no note, and the build does not
// break on a lock of one kind passed to a method of the other.
func TestRewriteSwapsMethodExpressions(t *testing.T) {
	out, notes := rewriteDir(t, "testdata/methodexpr", "sync") // sync is not rewritten, as in syncwatch test
	checkGolden(t, out)
	assert.Empty(t, notes)
}

// A method expression of a swapped type stays sync where it, or a lock it
// is called on, meets code that is not rewritten: handed to a function of
// another module whose parameter is a func(*sync.Mutex), or called on a
// lock handed to one. Elsewhere it is swapped with its lock.
func TestRewriteKeepsMethodExpressionsThatMeetForeignCode(t *testing.T) {
	out, notes := rewriteDir(t, "testdata/methodexprforeign", "lib", "sync")
	checkGolden(t, out)
	assert.NotEmpty(t, notes)
}
