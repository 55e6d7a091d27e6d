package lockorder_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"testing"
)

// The syncwatch_off build must keep the API: every exported identifier
// (type, func, method, constant, variable) of one build is in the other,
// with the same signature, so that a program builds either way. Both
// builds' files are chosen by go/build's constraints and parsed; nothing
// is compiled and the go tool is not needed. (This file has no build tag:
// it checks both builds from either.)

func TestAPIParityWithOffBuild(t *testing.T) {
	on, err := exportedAPI(nil)
	if err != nil {
		t.Fatal(err)
	}
	off, err := exportedAPI([]string{"syncwatch_off"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"func NewMutex", "method (*RWMutex).LockContext", "type Mode"} {
		if on[name] == "" || off[name] == "" {
			t.Fatalf("%s not found in both builds: the parse is broken", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(on)) {
		switch o, ok := off[name]; {
		case !ok:
			t.Errorf("%s: only in the default build", name)
		case o != on[name]:
			t.Errorf("%s differs:\n\tdefault:       %s\n\tsyncwatch_off: %s", name, on[name], o)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(off)) {
		if _, ok := on[name]; !ok {
			t.Errorf("%s: only in the syncwatch_off build", name)
		}
	}
}

// exportedAPI returns the exported declarations of the package in the
// current directory built with tags, by name ("func F", "method (*T).M",
// "type T", "const C", "var V"), each with its signature as source text.
func exportedAPI(tags []string) (map[string]string, error) {
	ctx := build.Default
	ctx.BuildTags = tags
	pkg, err := ctx.ImportDir(".", 0)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	api := map[string]string{}
	add := func(name, sig string) error {
		if old, ok := api[name]; ok && old != sig {
			return fmt.Errorf("%s declared twice with tags %v", name, tags)
		}
		api[name] = sig
		return nil
	}
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			for name, sig := range declAPI(fset, d) {
				if err := add(name, sig); err != nil {
					return nil, err
				}
			}
		}
	}
	return api, nil
}

// declAPI returns the exported names d declares and their signatures.
func declAPI(fset *token.FileSet, d ast.Decl) map[string]string {
	out := map[string]string{}
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			break
		}
		if d.Recv == nil {
			out["func "+d.Name.Name] = src(fset, bare(d.Type))
			break
		}
		recv := d.Recv.List[0].Type
		base := recv
		if s, ok := base.(*ast.StarExpr); ok {
			base = s.X
		}
		if id, ok := base.(*ast.Ident); ok && id.IsExported() {
			out[fmt.Sprintf("method (%s).%s", src(fset, recv), d.Name.Name)] = src(fset, bare(d.Type))
		}
	case *ast.GenDecl:
		var typ, val string // a const group's implicit repetition
		for i, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() {
					continue
				}
				sig := src(fset, exportedPart(s.Type))
				if s.Assign.IsValid() {
					sig = "= " + sig
				}
				if s.TypeParams != nil {
					sig = src(fset, s.TypeParams) + " " + sig
				}
				out["type "+s.Name.Name] = sig
			case *ast.ValueSpec:
				if s.Type != nil || len(s.Values) > 0 {
					typ, val = "", ""
					if s.Type != nil {
						typ = src(fset, s.Type)
					}
					if len(s.Values) > 0 {
						val = src(fset, &ast.CompositeLit{Elts: s.Values})
					}
				}
				kind := "var"
				if d.Tok == token.CONST {
					kind = "const"
				}
				for _, n := range s.Names {
					if n.IsExported() {
						out[kind+" "+n.Name] = fmt.Sprintf("%s = %s (spec %d)", typ, val, i)
					}
				}
			}
		}
	}
	return out
}

// bare returns ft without parameter and result names, which are not part
// of a signature.
func bare(ft *ast.FuncType) *ast.FuncType {
	strip := func(fl *ast.FieldList) *ast.FieldList {
		if fl == nil {
			return nil
		}
		out := &ast.FieldList{}
		for _, f := range fl.List {
			for range max(1, len(f.Names)) {
				out.List = append(out.List, &ast.Field{Type: f.Type})
			}
		}
		return out
	}
	return &ast.FuncType{TypeParams: ft.TypeParams, Params: strip(ft.Params), Results: strip(ft.Results)}
}

// exportedPart returns a struct type with its unexported fields removed
// (the two builds keep different state); any other type as it is.
func exportedPart(e ast.Expr) ast.Expr {
	st, ok := e.(*ast.StructType)
	if !ok {
		return e
	}
	out := &ast.StructType{Fields: &ast.FieldList{}}
	for _, f := range st.Fields.List {
		var names []*ast.Ident
		for _, n := range f.Names {
			if n.IsExported() {
				names = append(names, n)
			}
		}
		embedded := len(f.Names) == 0
		if len(names) > 0 || embedded && ast.IsExported(typeName(f.Type)) {
			out.Fields.List = append(out.Fields.List, &ast.Field{Names: names, Type: f.Type})
		}
	}
	return out
}

// typeName is the name of an embedded field's type.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// src prints n as source text on one line.
func src(fset *token.FileSet, n any) string {
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, n); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(bytes.Join(bytes.Fields(b.Bytes()), []byte(" ")))
}
