package swap

import (
	"fmt"
	"go/ast"
	"go/types"
)

// NamesFile is the name of the generated file that holds a package's
// naming helpers (NamesSource).
const NamesFile = "syncwatch_names.go"

// lockingMethods are the methods whose call names a lock on first use.
var lockingMethods = []string{"Lock", "RLock", "TryLock", "TryRLock", "LockContext", "RLockContext"}

// nameLock names the lock that call locks, when the code knows it by its
// declaration: a package-level variable (mu.Lock(), pkg.Mu.Lock()), a
// local variable that holds the lock, or a field, reached by any chain of
// selectors, index expressions and embedded fields (x.revMu.Lock(),
// x.Lock(), s.shards[i].Lock()), holding the lock or a pointer to it. It
// wraps the lock in a call of the package's naming helper, which puts it
// in the class exprName or chainName makes unless it already has one; it
// reports whether it did.
func (r *rewriter) nameLock(call *ast.CallExpr) bool {
	info := r.f.Info
	fun, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || info == nil || r.f.Swapped == nil || !isLocking(fun.Sel.Name) {
		return false
	}
	sel := info.Selections[fun]
	if sel == nil || sel.Kind() != types.MethodVal {
		return false
	}
	var obj *types.Var // the field or variable that declares the lock
	lockType := info.TypeOf(fun.X)
	name := ""
	suffix := "" // text after fun.X that selects an embedded lock
	if path := sel.Index(); len(path) == 1 {
		obj, name = rootVar(fun.X, info), r.exprName(fun.X)
	} else {
		// x.Lock() on a lock embedded in x, perhaps through other
		// embedded fields.
		fields := fieldPath(sel.Recv(), path[:len(path)-1])
		if fields == nil {
			return false
		}
		for _, f := range fields {
			if !f.Exported() && f.Pkg() != r.pkg {
				return false // not selectable here
			}
			suffix += "." + f.Name()
		}
		obj, lockType = fields[len(fields)-1], fields[len(fields)-1].Type()
		name = chainName(sel.Recv(), fields, func() string { return r.exprName(fun.X) })
	}
	if obj == nil || name == "" || !r.f.Swapped(obj) {
		return false
	}
	kind, ptr, ok := lockKind(lockType)
	if !ok {
		return false
	}
	addr := "&"
	if ptr {
		addr = ""
	}
	r.replace(fun.X.Pos(), fun.X.Pos(), fmt.Sprintf("syncwatchNamed%s(%s", kind, addr))
	r.replace(fun.X.End(), fun.X.End(), fmt.Sprintf("%s, %q)", suffix, name))
	return true
}

func isLocking(method string) bool {
	for _, m := range lockingMethods {
		if m == method {
			return true
		}
	}
	return false
}

// rootVar returns the field or variable whose declared type holds the
// lock e denotes (the slice, for s.locks[i]), or nil.
func rootVar(e ast.Expr, info *types.Info) *types.Var {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return rootVar(e.X, info)
	case *ast.StarExpr:
		return rootVar(e.X, info)
	case *ast.IndexExpr:
		return rootVar(e.X, info)
	case *ast.SelectorExpr:
		if sel := info.Selections[e]; sel != nil {
			if sel.Kind() != types.FieldVal {
				return nil
			}
			v, _ := sel.Obj().(*types.Var)
			return v
		}
		v, _ := info.Uses[e.Sel].(*types.Var)
		return v
	case *ast.Ident:
		v, _ := info.Uses[e].(*types.Var)
		return v
	}
	return nil
}

// exprName names what e denotes after its declaration, or returns "":
//
//   - a package-level variable: "pkg.v";
//   - a local variable of the function F (the method T.M): "pkg.F.v"
//     ("pkg.T.M.v"), unless it is a parameter or a pointer to a lock,
//     which may point to a lock declared elsewhere;
//   - a field of a named struct type T: "pkg.T.f";
//   - a field of an unnamed struct type: the name of what holds it, ".f";
//   - an element of an array, slice or map: the name of the container.
func (r *rewriter) exprName(e ast.Expr) string {
	info := r.f.Info
	switch e := e.(type) {
	case *ast.ParenExpr:
		return r.exprName(e.X)
	case *ast.StarExpr:
		return r.exprName(e.X)
	case *ast.IndexExpr:
		return r.exprName(e.X)
	case *ast.SelectorExpr:
		if sel := info.Selections[e]; sel != nil {
			if sel.Kind() != types.FieldVal {
				return ""
			}
			fields := fieldPath(sel.Recv(), sel.Index())
			if fields == nil {
				return ""
			}
			return chainName(sel.Recv(), fields, func() string { return r.exprName(e.X) })
		}
		return r.varName(info.Uses[e.Sel])
	case *ast.Ident:
		return r.varName(info.Uses[e])
	}
	return ""
}

// varName names a variable; see exprName.
func (r *rewriter) varName(obj types.Object) string {
	v, ok := obj.(*types.Var)
	if !ok || v.Pkg() == nil || v.IsField() {
		return ""
	}
	if v.Parent() == v.Pkg().Scope() {
		return v.Pkg().Name() + "." + v.Name()
	}
	if r.fnName == "" || r.params[v] {
		return ""
	}
	if _, ptr, ok := lockKind(v.Type()); ok && ptr {
		return ""
	}
	return v.Pkg().Name() + "." + r.fnName + "." + v.Name()
}

// fieldPath returns the fields that index selects, one after the other,
// from a value of type t, or nil.
func fieldPath(t types.Type, index []int) []*types.Var {
	var fields []*types.Var
	for _, i := range index {
		st, ok := deref(t).Underlying().(*types.Struct)
		if !ok || i >= st.NumFields() {
			return nil
		}
		f := st.Field(i)
		fields = append(fields, f)
		t = f.Type()
	}
	return fields
}

// chainName names the last of fields, selected one after the other from
// a value of type recv: after the nearest named struct type that declares
// it ("pkg.T.f"), or after what holds the unnamed struct that declares it
// (base(), ".f"). It returns "" when that has no name.
func chainName(recv types.Type, fields []*types.Var, base func() string) string {
	name := typeName(recv)
	if name == "" {
		name = base()
	}
	for i, f := range fields {
		if name != "" {
			name += "." + f.Name()
		}
		if i < len(fields)-1 {
			if n := typeName(f.Type()); n != "" {
				name = n
			}
		}
	}
	return name
}

// typeName returns "pkg.T" for a named type T or a pointer to it, or "".
func typeName(t types.Type) string {
	n, ok := deref(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return ""
	}
	return n.Obj().Pkg().Name() + "." + n.Obj().Name()
}

// lockKind returns "Mutex" or "RWMutex" for a lock held by value or
// through a pointer, and whether through a pointer.
func lockKind(t types.Type) (kind string, ptr bool, ok bool) {
	if p, isPtr := types.Unalias(t).(*types.Pointer); isPtr {
		t, ptr = p.Elem(), true
	}
	named, isNamed := types.Unalias(t).(*types.Named)
	if !isNamed || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != "sync" {
		return "", false, false
	}
	switch name := named.Obj().Name(); name {
	case "Mutex", "RWMutex":
		return name, ptr, true
	}
	return "", false, false
}

// deref returns the type t points to, or t, aliases resolved.
func deref(t types.Type) types.Type {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		return types.Unalias(p.Elem())
	}
	return t
}

// NamesSource returns a file of package pkg with the naming helpers the
// rewritten files call: each puts a lock in the class named after its
// declaration unless it has one (lockorder's SetClassIfNew), and returns
// it.
func NamesSource(pkg string) []byte {
	return fmt.Appendf(nil, `// Code generated by syncwatch. DO NOT EDIT.

package %s

import %s %q

func syncwatchNamedMutex(m *%[2]s.Mutex, name string) *%[2]s.Mutex {
	m.SetClassIfNew(name)
	return m
}

func syncwatchNamedRWMutex(m *%[2]s.RWMutex, name string) *%[2]s.RWMutex {
	m.SetClassIfNew(name)
	return m
}
`, pkg, LockorderName, LockorderPath)
}

// enterFunc notes what naming needs of a function declared at package
// level: its name, and its receiver and parameters, which are not named.
func (r *rewriter) enterFunc(fd *ast.FuncDecl) {
	r.fnName = ""
	fn, ok := r.f.Info.Defs[fd.Name].(*types.Func)
	if !ok {
		return
	}
	r.fnName = fn.Name()
	if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
		if n, ok := deref(recv.Type()).(*types.Named); ok {
			r.fnName = n.Obj().Name() + "." + fn.Name()
		}
	}
	r.addParams(fd.Recv)
}

// addParams records the names of fields, parameters of a function.
func (r *rewriter) addParams(lists ...*ast.FieldList) {
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, f := range l.List {
			for _, id := range f.Names {
				if v, ok := r.f.Info.Defs[id].(*types.Var); ok {
					r.params[v] = true
				}
			}
		}
	}
}

// filePackage returns the package the file declares, or nil.
func filePackage(f *ast.File, info *types.Info) *types.Package {
	if info == nil {
		return nil
	}
	for _, d := range f.Decls {
		var ids []*ast.Ident
		switch d := d.(type) {
		case *ast.FuncDecl:
			ids = append(ids, d.Name)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					ids = append(ids, spec.Names...)
				case *ast.TypeSpec:
					ids = append(ids, spec.Name)
				}
			}
		}
		for _, id := range ids {
			if obj := info.Defs[id]; obj != nil && obj.Pkg() != nil {
				return obj.Pkg()
			}
		}
	}
	return nil
}
