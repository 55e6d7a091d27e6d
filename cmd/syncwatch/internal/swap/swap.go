// Package swap rewrites Go source so that sync's Mutex, RWMutex, Once,
// WaitGroup, Cond and NewCond become lockorder's.
//
// A rewrite is a list of edits to the file's bytes, each on one line, so
// that the rewritten file keeps every line number: stacks, reports and
// compiler errors name the lines of the original file. Where the type
// checker saw the file, names resolve through its types (import aliases,
// dot-imports, shadowing); a file it did not see (other build tags, cgo)
// is rewritten on its syntax alone.
package swap

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
)

// The names the rewritten code uses; none can clash with user code that
// does not start its own names with "syncwatch".
const (
	// LockorderName is the import name of lockorder in rewritten files.
	LockorderName = "syncwatchlockorder"
	// LockorderPath is lockorder's import path.
	LockorderPath = "github.com/syncwatch/syncwatch/lockorder"
	// UserTestMain is what a package's own TestMain is renamed to.
	UserTestMain = "syncwatchUserTestMain"
	// exitFunc replaces os.Exit in a package's own TestMain.
	exitFunc = "syncwatchExit"
	// checkedType wraps the *testing.M a package's own TestMain hands to
	// a harness.
	checkedType = "syncwatchChecked"
)

// Swapped lists the names of package sync that lockorder replaces.
var Swapped = []string{"Mutex", "RWMutex", "Once", "WaitGroup", "Cond", "NewCond"}

// IsSwapped reports whether name, of package sync, is replaced.
func IsSwapped(name string) bool { return slices.Contains(Swapped, name) }

// A File is one file to rewrite.
type File struct {
	Fset *token.FileSet
	AST  *ast.File
	Src  []byte
	// Info is the type checker's account of the file, or nil when it did
	// not see the file.
	Info *types.Info
	// Keep holds the positions of sync selectors (or dot-imported
	// identifiers) to leave as sync: see Analysis.
	Keep map[token.Pos]bool
	// Swapped reports whether a field or variable's declared sync type is
	// swapped; when set, locks known by a field or package-level variable
	// are named after it (see NamesSource).
	Swapped func(*types.Var) bool
	// WrapTestMain renames the file's TestMain, if it declares one, and
	// turns its os.Exit calls into a return to the generated TestMain
	// (see TestMainFile).
	WrapTestMain bool
}

// Result is a rewritten file.
type Result struct {
	Src []byte
	// Changed reports whether anything was rewritten.
	Changed bool
	// Named reports whether the file calls the package's naming helpers,
	// which NamesSource makes.
	Named bool
	// HasTestMain reports whether the file declared TestMain (renamed to
	// UserTestMain when WrapTestMain was set).
	HasTestMain bool
}

type edit struct {
	start, end int
	text       string
}

// rewriter holds one file's edits and the uses of its imports.
type rewriter struct {
	f       File
	base    int // file offset of f.AST's first byte, for Pos to offset
	edits   []edit
	uses    map[*ast.ImportSpec]int // uses left of each import
	removed map[*ast.ImportSpec]int // uses an edit took away
	swapped bool                    // a sync name was replaced

	// For naming locks (names.go):
	pkg    *types.Package      // the file's package
	fnName string              // the package-level function being visited ("F", "T.M")
	params map[*types.Var]bool // receivers and parameters seen
}

// Rewrite rewrites f. It returns f's source unchanged when nothing in it
// names a swapped type.
func Rewrite(f File) (Result, error) {
	r := &rewriter{f: f, uses: map[*ast.ImportSpec]int{}, removed: map[*ast.ImportSpec]int{},
		pkg: filePackage(f.AST, f.Info), params: map[*types.Var]bool{}}
	tf := f.Fset.File(f.AST.Package)
	if tf == nil {
		return Result{}, fmt.Errorf("swap: file not in its FileSet")
	}
	if tf.Size() != len(f.Src) {
		return Result{}, fmt.Errorf("swap: %s: source is %d bytes, parsed %d", tf.Name(), len(f.Src), tf.Size())
	}
	r.base = tf.Base()
	imports := r.importsOf()
	res := Result{}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			// Sel is never visited: x.Mutex is a field, not sync's type.
			id, ok := n.X.(*ast.Ident)
			if !ok {
				ast.Inspect(n.X, visit)
				return false
			}
			spec := imports.specOf(id, f.Info)
			if spec == nil {
				visit(id)
				return false
			}
			r.uses[spec]++
			if importPath(spec) == "sync" && IsSwapped(n.Sel.Name) && !f.Keep[n.Pos()] {
				r.replace(n.Pos(), n.End(), LockorderName+"."+n.Sel.Name)
				r.removed[spec]++
				r.swapped = true
			}
			return false
		case *ast.KeyValueExpr:
			// A key of a struct literal is a field name.
			if _, ok := n.Key.(*ast.Ident); !ok {
				ast.Inspect(n.Key, visit)
			}
			ast.Inspect(n.Value, visit)
			return false
		case *ast.Ident:
			if imports.dot != nil && usesDot(n, f.Info) {
				r.uses[imports.dot]++
			}
			if spec := imports.dotSpecOf(n, f.Info); spec != nil && !f.Keep[n.Pos()] {
				r.replace(n.Pos(), n.End(), LockorderName+"."+n.Name)
				r.removed[spec]++
				r.swapped = true
			}
		case *ast.CallExpr:
			if r.nameLock(n) {
				res.Named = true
			}
		case *ast.FuncType:
			if f.Info != nil {
				r.addParams(n.Params, n.Results)
			}
		case *ast.FuncDecl:
			if n.Recv == nil && n.Name.Name == "TestMain" {
				res.HasTestMain = true
				if f.WrapTestMain {
					r.replace(n.Name.Pos(), n.Name.End(), UserTestMain)
					r.wrapExits(n.Body, imports)
					r.wrapHarness(n)
				}
			}
		}
		return true
	}
	for _, d := range f.AST.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		r.fnName = ""
		if fd, ok := d.(*ast.FuncDecl); ok && f.Info != nil {
			r.enterFunc(fd)
		}
		ast.Inspect(d, visit)
	}
	if len(r.edits) == 0 {
		res.Src = f.Src
		return res, nil
	}
	r.fixImports(imports)
	res.Src = r.apply()
	res.Changed = true
	return res, nil
}

// wrapExits turns each os.Exit(code) in body into syncwatchExit(code),
// which the generated TestMain turns back into an exit after its check.
func (r *rewriter) wrapExits(body *ast.BlockStmt, imports fileImports) {
	if body == nil {
		return
	}
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Exit" {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if spec := imports.specOf(id, r.f.Info); spec != nil && importPath(spec) == "os" {
			r.replace(sel.Pos(), sel.End(), exitFunc)
			r.removed[spec]++
		}
		return true
	})
}

// wrapHarness hands a harness that takes TestMain's *testing.M as an
// interface and exits by itself (goleak.VerifyTestMain(m)) a
// syncwatchChecked{m} instead, whose Run checks the tests after running
// them (see TestMainFile).
func (r *rewriter) wrapHarness(fd *ast.FuncDecl) {
	info := r.f.Info
	params := fd.Type.Params.List
	if info == nil || fd.Body == nil || len(params) != 1 || len(params[0].Names) != 1 {
		return
	}
	m := info.Defs[params[0].Names[0]]
	if m == nil {
		return
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sig, ok := info.TypeOf(call.Fun).(*types.Signature)
		if !ok {
			return true
		}
		for i, arg := range call.Args {
			id, ok := arg.(*ast.Ident)
			if !ok || info.Uses[id] != m {
				continue
			}
			j := min(i, sig.Params().Len()-1)
			if j < 0 {
				continue
			}
			t := sig.Params().At(j).Type()
			if sig.Variadic() && j == sig.Params().Len()-1 {
				if sl, ok := t.(*types.Slice); ok {
					t = sl.Elem()
				}
			}
			if types.IsInterface(t) {
				r.replace(id.Pos(), id.End(), checkedType+"{"+id.Name+"}")
			}
		}
		return true
	})
}

func (r *rewriter) replace(start, end token.Pos, text string) {
	r.edits = append(r.edits, edit{int(start) - r.base, int(end) - r.base, text})
}

// fixImports adds lockorder's import after the file's last import, on the
// same line, and blanks the imports whose every use an edit took away.
func (r *rewriter) fixImports(imports fileImports) {
	for spec, n := range r.removed {
		if r.uses[spec] != n {
			continue
		}
		if spec.Name != nil {
			r.replace(spec.Name.Pos(), spec.Name.End(), "_")
		} else {
			r.replace(spec.Path.Pos(), spec.Path.Pos(), "_ ")
		}
	}
	if !r.swapped {
		return
	}
	decl := lastImportDecl(r.f.AST)
	spec := fmt.Sprintf("%s %q", LockorderName, LockorderPath)
	switch {
	case decl == nil:
		// After the package clause, on its line.
		end := r.f.AST.Name.End()
		r.replace(end, end, "; import "+spec)
	case decl.Lparen.IsValid() && len(decl.Specs) > 0:
		end := decl.Specs[len(decl.Specs)-1].End()
		r.replace(end, end, "; "+spec)
	case decl.Lparen.IsValid():
		r.replace(decl.Lparen+1, decl.Lparen+1, spec+";")
	default:
		end := decl.End()
		r.replace(end, end, "; import "+spec)
	}
}

func lastImportDecl(f *ast.File) *ast.GenDecl {
	var last *ast.GenDecl
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			last = g
		}
	}
	return last
}

// apply returns the source with the edits made. Edits never overlap:
// each is a whole selector, identifier or an insertion point.
func (r *rewriter) apply() []byte {
	// By start, an insertion before a replacement at the same place.
	slices.SortStableFunc(r.edits, func(a, b edit) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.end - b.end
	})
	var out bytes.Buffer
	at := 0
	for _, e := range r.edits {
		if e.start < at {
			continue // an identifier inside a selector already replaced
		}
		out.Write(r.f.Src[at:e.start])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(r.f.Src[at:])
	return out.Bytes()
}

// fileImports resolves the file's package names.
type fileImports struct {
	byName map[string]*ast.ImportSpec // local name -> spec
	specs  []*ast.ImportSpec
	dot    *ast.ImportSpec // the dot-import of sync, if any
}

func (r *rewriter) importsOf() fileImports {
	fi := fileImports{byName: map[string]*ast.ImportSpec{}}
	for _, spec := range r.f.AST.Imports {
		fi.specs = append(fi.specs, spec)
		path := importPath(spec)
		name := defaultName(path)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		switch name {
		case "_":
		case ".":
			if path == "sync" {
				fi.dot = spec
			}
		default:
			fi.byName[name] = spec
		}
	}
	return fi
}

// specOf returns the import that id, the X of a selector, names, or nil.
func (fi fileImports) specOf(id *ast.Ident, info *types.Info) *ast.ImportSpec {
	spec := fi.byName[id.Name]
	if spec == nil {
		return nil
	}
	if info != nil {
		pn, ok := info.Uses[id].(*types.PkgName)
		if !ok || pn.Imported().Path() != importPath(spec) {
			return nil
		}
		return spec
	}
	if id.Obj != nil { // a local declaration shadows the import (syntax only)
		return nil
	}
	return spec
}

// usesDot reports whether id may name something of the dot-imported sync:
// with types, whether it does; without, always, so that the import is
// never taken away.
func usesDot(id *ast.Ident, info *types.Info) bool {
	if info == nil {
		return true
	}
	obj := info.Uses[id]
	return obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "sync" && obj.Parent() == obj.Pkg().Scope()
}

// dotSpecOf returns the dot-import of sync when id is a use of one of its
// swapped names, or nil. Selectors' X are handled by the caller, and
// their Sel never reaches here.
func (fi fileImports) dotSpecOf(id *ast.Ident, info *types.Info) *ast.ImportSpec {
	if fi.dot == nil || !IsSwapped(id.Name) {
		return nil
	}
	if info != nil {
		obj := info.Uses[id]
		if obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != "sync" {
			return nil
		}
		if _, field := obj.(*types.Var); field {
			return nil
		}
		return fi.dot
	}
	if id.Obj != nil { // a local declaration (syntax only)
		return nil
	}
	return fi.dot
}

func importPath(spec *ast.ImportSpec) string {
	p, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		return ""
	}
	return p
}

// defaultName is the name an import gets without an explicit one: the
// last element of its path (good enough for sync and os, the only ones
// matched by name).
func defaultName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}
