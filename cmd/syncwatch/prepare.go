package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/version"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/syncwatch/syncwatch/cmd/syncwatch/internal/swap"
)

// testMainFile is the name of the generated TestMain, beside the
// package's own files.
const testMainFile = "syncwatch_testmain_test.go"

// rewriteSet is what prepare rewrote.
type rewriteSet struct {
	overlay map[string]string // original file -> rewritten copy
	cache   string            // GOMODCACHE
	cached  []*copiedModule   // modules of the cache that may be rewritten
	copied  []copiedModule    // those rewritten, in a copy
	files   int               // files rewritten
	notes   []string          // what stays sync, and why
}

// prepare loads the packages, rewrites them into work and writes the
// overlay file, which also holds the entries of extra. With tests set, it
// adds a TestMain to each of the module's packages that has tests.
func prepare(m module, o options, work string, excluded map[string]bool, extra map[string]string, tests bool) (string, rewriteSet, error) {
	patterns := o.patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	// The module's every package is rewritten, tested or not: the tested
	// ones import them.
	patterns = append(slices.Clone(patterns), m.path+"/...")
	mode := packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
		packages.NeedImports | packages.NeedTypes | packages.NeedSyntax |
		packages.NeedTypesInfo | packages.NeedModule | packages.NeedEmbedFiles
	if o.deps || !exportDataReadable() {
		mode |= packages.NeedDeps
	}
	buildFlags := o.buildFlags
	if o.mod == "mod" {
		// Types from the module cache, as the build, not from vendor/.
		buildFlags = append(slices.Clone(buildFlags), "-mod=mod")
	}
	cfg := &packages.Config{Mode: mode, Tests: tests, BuildFlags: buildFlags}
	pkgs, err := packages.Load(cfg, patterns...)
	if err == nil && cfg.Mode&packages.NeedDeps == 0 && importFailed(pkgs) {
		// The go command's export data may be newer than the importer
		// this command was built with: type-check every package from
		// source instead.
		cfg.Mode |= packages.NeedDeps
		pkgs, err = packages.Load(cfg, patterns...)
	}
	if err != nil {
		return "", rewriteSet{}, fmt.Errorf("syncwatch: loading packages: %w", err)
	}
	var all []*packages.Package
	packages.Visit(pkgs, nil, func(p *packages.Package) { all = append(all, p) })

	rewritten := func(p *packages.Package) bool {
		switch {
		case p.Module == nil:
			return false // the standard library, or a generated test main
		case p.Module.Main:
			return true
		default:
			return o.deps && !excluded[p.Module.Path]
		}
	}
	byPath := map[string]bool{}
	var chosen []*packages.Package
	for _, p := range all {
		if rewritten(p) && len(p.Syntax) > 0 && !strings.HasSuffix(p.ID, ".test") {
			chosen = append(chosen, p)
			byPath[p.PkgPath] = true
		}
	}
	if len(chosen) == 0 {
		return "", rewriteSet{}, fmt.Errorf("syncwatch: no Go package to rewrite in %s", m.dir)
	}
	// A Go file that a //go:embed embeds keeps its bytes: the overlay
	// that rewrites a file stands for it in the embedded copy too, and a
	// test comparing what it embeds with the file would fail.
	frozen := map[string]bool{}
	for _, p := range all {
		for _, name := range p.EmbedFiles {
			if strings.HasSuffix(name, ".go") {
				frozen[name] = true
			}
		}
	}
	an := swap.NewAnalysis(chosen[0].Fset, func(path string) bool { return byPath[path] })
	if len(frozen) > 0 {
		an.Frozen = func(name string) bool { return frozen[name] }
	}
	for _, p := range chosen {
		an.AddPackage(p.Syntax, p.TypesInfo)
	}
	an.Solve()

	set := rewriteSet{overlay: maps.Clone(extra), notes: an.Notes}
	if set.overlay == nil {
		set.overlay = map[string]string{}
	}
	if o.deps {
		if set.cache, err = moduleCache(); err != nil {
			return "", set, err
		}
		seen := map[string]bool{}
		for _, p := range chosen {
			if m := p.Module; !m.Main && m.Dir != "" && !seen[m.Dir] && inside(m.Dir, set.cache) {
				seen[m.Dir] = true
				set.cached = append(set.cached, &copiedModule{path: m.Path, dir: m.Dir, copy: filepath.Join(work, "mod", shortHash(m.Dir+"/x"))})
			}
		}
	}
	done := map[string]bool{}
	testMains := map[string]string{}   // dir -> package holding the user's TestMain
	testDirs := map[string]string{}    // dir -> package name, for dirs with tests
	named := map[string]bool{}         // dir/package of files that name locks
	unwrappable := map[string]string{} // dir -> embedded test file declaring TestMain
	for _, p := range chosen {
		for _, f := range p.Syntax {
			name := p.Fset.File(f.Package).Name()
			if done[name] || !slices.Contains(p.GoFiles, name) {
				continue // seen, or cgo's output (the original is read below)
			}
			done[name] = true
			isTest := strings.HasSuffix(name, "_test.go")
			if isTest && p.Module.Main {
				testDirs[filepath.Dir(name)] = strings.TrimSuffix(p.Name, "_test")
			}
			if frozen[name] {
				// Embedded: left as it is (see above). A TestMain in it
				// cannot be wrapped, and another would not build.
				if isTest && p.Module.Main && declaresTestMain(f) {
					unwrappable[filepath.Dir(name)] = name
				}
				continue
			}
			res, err := rewriteFile(name, swap.File{Fset: p.Fset, AST: f, Info: p.TypesInfo, Keep: an.Keep, Swapped: an.Swapped, WrapTestMain: tests && isTest && p.Module.Main}, work, &set)
			if err != nil {
				return "", set, err
			}
			if res.Named {
				named[filepath.Join(filepath.Dir(name), p.Name)] = true
			}
			if res.HasTestMain && isTest {
				testMains[filepath.Dir(name)] = p.Name
			}
		}
		// Files the type checker did not see: other build tags, cgo.
		for _, name := range append(slices.Clone(p.GoFiles), p.IgnoredFiles...) {
			if done[name] || !strings.HasSuffix(name, ".go") || frozen[name] {
				continue
			}
			done[name] = true
			if err := rewriteUntyped(name, work, &set); err != nil {
				return "", set, err
			}
		}
	}
	for dirPkg := range named {
		// An external test package gets its own helpers, in a test file.
		dir, pkg := filepath.Split(dirPkg)
		file := swap.NamesFile
		if strings.HasSuffix(pkg, "_test") {
			file = strings.TrimSuffix(file, ".go") + "_test.go"
		}
		if err := overlayFile(filepath.Join(dir, file), swap.NamesSource(pkg), work, &set); err != nil {
			return "", set, err
		}
	}
	if tests {
		for _, dir := range slices.Sorted(maps.Keys(unwrappable)) {
			file := unwrappable[dir]
			delete(testDirs, dir)
			set.notes = append(set.notes, fmt.Sprintf("%s: its tests run without lockordertest's verdict: its TestMain is in a file a //go:embed embeds, which must keep its bytes", file))
		}
		for dir, pkg := range testDirs {
			name, wrap := pkg, false
			if user, ok := testMains[dir]; ok {
				name, wrap = user, true
			}
			path := filepath.Join(dir, testMainFile)
			copyPath := filepath.Join(work, "src", shortHash(path), testMainFile)
			if err := writeFile(copyPath, swap.TestMainFile(name, wrap)); err != nil {
				return "", set, err
			}
			set.overlay[path] = copyPath
		}
	}
	overlayPath := filepath.Join(work, "overlay.json")
	return overlayPath, set, writeOverlay(overlayPath, set.overlay)
}

// newestReadableExport is the newest Go release whose export data the
// type checker's importer (golang.org/x/tools v0.48) reads; a newer go
// command's packages are type-checked from source.
const newestReadableExport = "go1.26"

// exportDataReadable reports whether the go command's release writes
// export data the importer reads.
func exportDataReadable() bool {
	v := goVersion()
	return version.IsValid(v) && version.Compare(version.Lang(v), newestReadableExport) <= 0
}

// importFailed reports whether the type checker could not import a
// dependency of a package from its export data.
func importFailed(pkgs []*packages.Package) bool {
	for _, p := range pkgs {
		for _, e := range p.Errors {
			if e.Kind == packages.TypeError && strings.Contains(e.Msg, "could not import") {
				return true
			}
		}
	}
	return false
}

func rewriteFile(name string, f swap.File, work string, set *rewriteSet) (swap.Result, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return swap.Result{}, err
	}
	f.Src = src
	res, err := swap.Rewrite(f)
	if err != nil {
		return res, err
	}
	if res.Changed {
		if err := overlayFile(name, res.Src, work, set); err != nil {
			return res, err
		}
	}
	return res, nil
}

// rewriteUntyped rewrites a file on its syntax alone.
func rewriteUntyped(name, work string, set *rewriteSet) error {
	src, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil // not Go that builds: go test will say so if it matters
	}
	if !importsSync(f) {
		return nil
	}
	res, err := swap.Rewrite(swap.File{Fset: fset, AST: f, Src: src})
	if err != nil || !res.Changed {
		return err
	}
	return overlayFile(name, res.Src, work, set)
}

func importsSync(f *ast.File) bool {
	for _, spec := range f.Imports {
		if spec.Path.Value == `"sync"` {
			return true
		}
	}
	return false
}

func overlayFile(name string, src []byte, work string, set *rewriteSet) error {
	for _, m := range set.cached {
		if !inside(name, m.dir) {
			continue
		}
		if !m.made {
			if err := copyModule(*m); err != nil {
				return err
			}
			m.made = true
			set.copied = append(set.copied, *m)
		}
		rel, err := filepath.Rel(m.dir, name)
		if err != nil {
			return err
		}
		set.files++
		return writeOver(filepath.Join(m.copy, rel), src)
	}
	copyPath := filepath.Join(work, "src", shortHash(name), filepath.Base(name))
	if err := writeFile(copyPath, src); err != nil {
		return err
	}
	set.overlay[name] = copyPath
	set.files++
	return nil
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(filepath.Dir(s)))
	return hex.EncodeToString(h[:6])
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// declaresTestMain reports whether f declares the function TestMain.
func declaresTestMain(f *ast.File) bool {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "TestMain" {
			return true
		}
	}
	return false
}
