package swap

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
)

// Analysis finds the sync values that must stay sync: those that flow to
// or from code that is not rewritten (a function of another module whose
// parameter is a *sync.Mutex, a field of its struct), and, transitively,
// every variable, field, parameter or result of rewritten code they flow
// through. A flow is an argument to its parameter, a value to the
// variable or field it is assigned to or initialises, a returned value
// to its result. Flows through containers (append, channels, maps) are
// not followed.
//
// Add every package to rewrite, then call Solve; the File.Keep of each
// file is Keep.
type Analysis struct {
	// Rewritten reports whether the package with the given import path is
	// rewritten.
	Rewritten func(path string) bool
	// Frozen, if set, reports whether the file with the given name, of a
	// rewritten package, is left as it is: a //go:embed embeds it, and
	// must get its bytes. What it declares stays sync, and so does every
	// slot its values flow to or from.
	Frozen func(filename string) bool

	fset  *token.FileSet
	decl  map[any]declOf      // slot -> the expression that gives it its type
	edges map[any][]flow      // slot -> slots it flows to or from
	seeds map[any][]token.Pos // slots that meet code not rewritten, and where
	kept  map[ast.Expr]bool   // declarations whose sync names stay sync
	// methodSlots are the method expressions of swapped types, with their
	// receiver parameter, the slot that stands for them.
	methodSlots map[*ast.SelectorExpr]*types.Var

	// Keep holds the positions of sync selectors to leave as sync.
	Keep map[token.Pos]bool
	// Notes says, once per site, what stays sync and why.
	Notes []string
}

// A slot is a types.Object (a variable, field, parameter or result) or an
// expression that makes a sync value (a composite literal, new, NewCond).
type declOf struct {
	expr ast.Expr
	info *types.Info
}

type flow struct {
	to  any
	pos token.Pos
}

// NewAnalysis returns an empty analysis over fset.
func NewAnalysis(fset *token.FileSet, rewritten func(path string) bool) *Analysis {
	return &Analysis{
		Rewritten:   rewritten,
		fset:        fset,
		decl:        map[any]declOf{},
		edges:       map[any][]flow{},
		seeds:       map[any][]token.Pos{},
		kept:        map[ast.Expr]bool{},
		methodSlots: map[*ast.SelectorExpr]*types.Var{},
		Keep:        map[token.Pos]bool{},
	}
}

// AddPackage records the declarations and flows of one type-checked
// package (all its files, test files included).
func (a *Analysis) AddPackage(files []*ast.File, info *types.Info) {
	for _, f := range files {
		a.methodExprs(f, info)
	}
	for _, f := range files {
		var sigs []*types.Signature // enclosing functions, innermost last
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				sig := a.funcDecl(n, info)
				if n.Body != nil {
					sigs = append(sigs, sig)
					ast.Inspect(n.Body, visit)
					sigs = sigs[:len(sigs)-1]
				}
				return false
			case *ast.FuncLit:
				sig, _ := info.TypeOf(n).(*types.Signature)
				a.funcType(n.Type, sig, info)
				sigs = append(sigs, sig)
				ast.Inspect(n.Body, visit)
				sigs = sigs[:len(sigs)-1]
				return false
			case *ast.StructType:
				a.structType(n, info)
			case *ast.ValueSpec:
				for i, name := range n.Names {
					obj := info.Defs[name]
					switch {
					case obj == nil:
					case n.Type != nil:
						a.decl[obj] = declOf{n.Type, info}
					case i < len(n.Values) && len(n.Names) == len(n.Values):
						a.decl[obj] = declOf{n.Values[i], info}
					}
					if obj != nil && len(n.Names) == len(n.Values) {
						a.link(obj, a.slotOf(n.Values[i], info), n.Values[i].Pos())
					}
				}
				if len(n.Values) == 1 && len(n.Names) > 1 {
					lhs := make([]ast.Expr, len(n.Names))
					for i, name := range n.Names {
						lhs[i] = name
					}
					a.tuple(lhs, n.Values[0], info)
				}
			case *ast.RangeStmt:
				// The value ranged over carries what the key and the
				// element do: a slice of locks, a map of them.
				for _, x := range []ast.Expr{n.Key, n.Value} {
					if x != nil {
						a.link(a.slotOf(x, info), a.slotOf(n.X, info), n.X.Pos())
					}
				}
			case *ast.AssignStmt:
				if len(n.Rhs) == 1 && len(n.Lhs) > 1 {
					a.tuple(n.Lhs, n.Rhs[0], info)
					return true
				}
				if len(n.Lhs) != len(n.Rhs) {
					return true
				}
				for i, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); ok && n.Tok == token.DEFINE {
						if obj := info.Defs[id]; obj != nil {
							a.decl[obj] = declOf{n.Rhs[i], info}
						}
					}
					a.link(a.slotOf(lhs, info), a.slotOf(n.Rhs[i], info), n.Rhs[i].Pos())
				}
			case *ast.CallExpr:
				a.call(n, info)
			case *ast.CompositeLit:
				a.compositeLit(n, info)
			case *ast.ReturnStmt:
				if len(sigs) == 0 || sigs[len(sigs)-1] == nil {
					return true
				}
				res := sigs[len(sigs)-1].Results()
				if res.Len() != len(n.Results) {
					return true
				}
				for i, r := range n.Results {
					a.link(res.At(i), a.slotOf(r, info), r.Pos())
				}
			}
			return true
		}
		ast.Inspect(f, visit)
	}
}

// tuple links each of lhs with the result of call rhs it is assigned
// ("a, b := f()"); a comma-ok form's first value is its operand's.
func (a *Analysis) tuple(lhs []ast.Expr, rhs ast.Expr, info *types.Info) {
	call, ok := ast.Unparen(rhs).(*ast.CallExpr)
	if !ok {
		if len(lhs) == 2 { // v, ok := m[k], x.(T), <-ch
			a.link(a.slotOf(lhs[0], info), a.slotOf(rhs, info), rhs.Pos())
		}
		return
	}
	sig, ok := info.TypeOf(call.Fun).(*types.Signature)
	if !ok || sig.Results().Len() != len(lhs) {
		return
	}
	for i, l := range lhs {
		a.link(a.slotOf(l, info), sig.Results().At(i), rhs.Pos())
	}
}

func (a *Analysis) funcDecl(fd *ast.FuncDecl, info *types.Info) *types.Signature {
	fn, _ := info.Defs[fd.Name].(*types.Func)
	if fn == nil {
		return nil
	}
	sig := fn.Type().(*types.Signature)
	if fd.Recv != nil && sig.Recv() != nil && len(fd.Recv.List) == 1 {
		a.decl[sig.Recv()] = declOf{fd.Recv.List[0].Type, info}
	}
	a.funcType(fd.Type, sig, info)
	return sig
}

// funcType records the declared types of a signature's parameters and
// results, named or not.
func (a *Analysis) funcType(ft *ast.FuncType, sig *types.Signature, info *types.Info) {
	if sig == nil {
		return
	}
	pair := func(fields *ast.FieldList, vars *types.Tuple) {
		if fields == nil {
			return
		}
		i := 0
		for _, field := range fields.List {
			for range max(len(field.Names), 1) {
				if i < vars.Len() {
					a.decl[vars.At(i)] = declOf{field.Type, info}
				}
				i++
			}
		}
	}
	pair(ft.Params, sig.Params())
	pair(ft.Results, sig.Results())
}

func (a *Analysis) structType(st *ast.StructType, info *types.Info) {
	for _, field := range st.Fields.List {
		if len(field.Names) == 0 {
			if obj := info.Defs[embeddedName(field.Type)]; obj != nil {
				a.decl[obj] = declOf{field.Type, info}
			}
			continue
		}
		for _, name := range field.Names {
			if obj := info.Defs[name]; obj != nil {
				a.decl[obj] = declOf{field.Type, info}
			}
		}
	}
}

// embeddedName returns the identifier that names an embedded field.
func embeddedName(e ast.Expr) *ast.Ident {
	switch e := e.(type) {
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.SelectorExpr:
		return e.Sel
	case *ast.IndexExpr:
		return embeddedName(e.X)
	case *ast.IndexListExpr:
		return embeddedName(e.X)
	case *ast.Ident:
		return e
	}
	return nil
}

// call links each argument to its parameter.
func (a *Analysis) call(call *ast.CallExpr, info *types.Info) {
	tv, ok := info.Types[call.Fun]
	if !ok || tv.IsType() {
		return // a conversion
	}
	sig, ok := tv.Type.(*types.Signature)
	if !ok {
		return
	}
	params := sig.Params()
	for i, arg := range call.Args {
		j := i
		if sig.Variadic() && j >= params.Len()-1 {
			j = params.Len() - 1
		}
		if j >= params.Len() {
			break
		}
		a.link(params.At(j), a.slotOf(arg, info), arg.Pos())
	}
}

// compositeLit links each field value of a struct literal to its field.
func (a *Analysis) compositeLit(lit *ast.CompositeLit, info *types.Info) {
	t := info.TypeOf(lit)
	if t == nil {
		return
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return
	}
	for i, elt := range lit.Elts {
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if key, ok := kv.Key.(*ast.Ident); ok {
				if field, ok := info.Uses[key].(*types.Var); ok {
					a.link(field, a.slotOf(kv.Value, info), kv.Value.Pos())
				}
			}
			continue
		}
		if i < st.NumFields() {
			a.link(st.Field(i), a.slotOf(elt, info), elt.Pos())
		}
	}
}

// slotOf returns the slot whose sync type e's value carries, or nil.
func (a *Analysis) slotOf(e ast.Expr, info *types.Info) any {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return a.slotOf(e.X, info)
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return a.slotOf(e.X, info)
		}
	case *ast.StarExpr:
		return a.slotOf(e.X, info)
	case *ast.IndexExpr:
		return a.slotOf(e.X, info)
	case *ast.Ident:
		if obj, ok := info.ObjectOf(e).(*types.Var); ok {
			return obj
		}
	case *ast.SelectorExpr:
		if sel := info.Selections[e]; sel != nil {
			if sel.Kind() == types.FieldVal {
				return sel.Obj()
			}
			if recv, ok := a.methodSlots[e]; ok {
				return recv // a method expression of a swapped type
			}
			return nil
		}
		if obj, ok := info.Uses[e.Sel].(*types.Var); ok {
			return obj // a package's variable
		}
	case *ast.CompositeLit:
		a.decl[e] = declOf{e, info}
		return e
	case *ast.CallExpr:
		if id, ok := e.Fun.(*ast.Ident); ok {
			if _, builtin := info.Uses[id].(*types.Builtin); builtin && id.Name == "new" {
				a.decl[e] = declOf{e, info}
				return e
			}
		}
		sig, ok := info.TypeOf(e.Fun).(*types.Signature)
		if ok && sig.Results().Len() == 1 {
			if fn := calledFunc(e, info); fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "sync" {
				a.decl[e] = declOf{e, info} // sync.NewCond(...)
				return e
			}
			return sig.Results().At(0)
		}
	}
	return nil
}

func calledFunc(call *ast.CallExpr, info *types.Info) *types.Func {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		fn, _ := info.Uses[f].(*types.Func)
		return fn
	case *ast.SelectorExpr:
		fn, _ := info.Uses[f.Sel].(*types.Func)
		return fn
	}
	return nil
}

// link records that a value flows between slots x and y at pos, when
// both their types name a swapped sync type (an interface, a Locker,
// takes either kind).
func (a *Analysis) link(x, y any, pos token.Pos) {
	x, y = origin(x), origin(y)
	if x == nil || y == nil || !carriesSync(a.typeOf(x)) || !carriesSync(a.typeOf(y)) {
		return
	}
	a.edges[x] = append(a.edges[x], flow{y, pos})
	a.edges[y] = append(a.edges[y], flow{x, pos})
	for _, s := range []any{x, y} {
		if a.foreign(s) && !slices.Contains(a.seeds[s], pos) {
			a.seeds[s] = append(a.seeds[s], pos)
		}
	}
}

// origin returns the slot s stands for: an instance's field, parameter
// or method is its generic declaration's, which is the one declared (and
// rewritten, or not) in its file.
func origin(s any) any {
	switch s := s.(type) {
	case *types.Var:
		return s.Origin()
	case *types.Func:
		return s.Origin()
	}
	return s
}

func (a *Analysis) typeOf(s any) types.Type {
	switch s := s.(type) {
	case types.Object:
		return s.Type()
	case ast.Expr:
		if d, ok := a.decl[s]; ok {
			return d.info.TypeOf(s)
		}
	}
	return nil
}

// foreign reports whether s belongs to code that is not rewritten.
func (a *Analysis) foreign(s any) bool {
	if _, ok := a.decl[s]; ok {
		return false // declared in rewritten code, or a method expression's receiver
	}
	obj, ok := s.(types.Object)
	return ok && obj.Pkg() != nil && !a.Rewritten(obj.Pkg().Path())
}

// carriesSync reports whether t is, or is built of (pointers, slices,
// arrays, maps, channels, unnamed structs), a swapped type of sync.
func carriesSync(t types.Type) bool {
	switch t := t.(type) {
	case *types.Named:
		obj := t.Obj()
		return obj.Pkg() != nil && obj.Pkg().Path() == "sync" && IsSwapped(obj.Name())
	case *types.Pointer:
		return carriesSync(t.Elem())
	case *types.Slice:
		return carriesSync(t.Elem())
	case *types.Array:
		return carriesSync(t.Elem())
	case *types.Map:
		return carriesSync(t.Key()) || carriesSync(t.Elem())
	case *types.Chan:
		return carriesSync(t.Elem())
	case *types.Signature:
		// A func of sync's types (func(*sync.Mutex)), which a method
		// expression of a swapped type flows to.
		for _, tu := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tu.Len() {
				if carriesSync(tu.At(i).Type()) {
					return true
				}
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if carriesSync(t.Field(i).Type()) {
				return true
			}
		}
	}
	return false
}

// Solve keeps as sync every slot reachable from code that is not
// rewritten, fills Keep, and writes Notes.
func (a *Analysis) Solve() {
	seen := map[any]bool{}
	var queue []any
	type note struct {
		pos  token.Pos
		text string
	}
	var notes []note
	for s, sites := range a.seeds {
		obj := s.(types.Object)
		name := obj.Name()
		if name == "" {
			name = "(a result)"
		}
		for _, pos := range sites {
			notes = append(notes, note{pos, fmt.Sprintf("%s: stays sync: it meets %s.%s (%s), which is not rewritten",
				a.fset.Position(pos), obj.Pkg().Name(), name, types.TypeString(obj.Type(), nil))})
		}
		seen[s] = true
		queue = append(queue, s)
	}
	if a.Frozen != nil {
		frozen := map[string]bool{}
		for s := range a.decl {
			pos := slotPos(s)
			if !pos.IsValid() || seen[s] {
				continue
			}
			// The file's own name: a //line directive names another.
			if name := a.fset.File(pos).Name(); a.Frozen(name) {
				seen[s] = true
				queue = append(queue, s)
				if !frozen[name] {
					frozen[name] = true
					notes = append(notes, note{a.fset.File(pos).Pos(0), fmt.Sprintf("%s: stays sync: a //go:embed embeds this file, which must keep its bytes", name)})
				}
			}
		}
	}
	slices.SortFunc(notes, func(x, y note) int { return int(x.pos - y.pos) })
	for i, n := range notes {
		if i == 0 || n.pos != notes[i-1].pos {
			a.Notes = append(a.Notes, n.text)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if d, ok := a.decl[s]; ok {
			a.keepIn(d)
		}
		for _, f := range a.edges[s] {
			if !seen[f.to] {
				seen[f.to] = true
				queue = append(queue, f.to)
			}
		}
	}
}

// slotPos returns where slot s is declared or made.
func slotPos(s any) token.Pos {
	switch s := s.(type) {
	case types.Object:
		return s.Pos()
	case ast.Expr:
		return s.Pos()
	}
	return token.NoPos
}

// keepIn keeps every swapped sync name in d's expression.
func (a *Analysis) keepIn(d declOf) {
	a.kept[d.expr] = true
	ast.Inspect(d.expr, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if obj := d.info.Uses[n.Sel]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "sync" && IsSwapped(obj.Name()) {
				if _, isPkg := d.info.Uses[identOf(n.X)].(*types.PkgName); isPkg {
					a.Keep[n.Pos()] = true
				}
			}
		case *ast.Ident:
			if obj := d.info.Uses[n]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "sync" && IsSwapped(obj.Name()) {
				a.Keep[n.Pos()] = true
			}
		}
		return true
	})
}

func identOf(e ast.Expr) *ast.Ident {
	id, _ := e.(*ast.Ident)
	return id
}

// Swapped reports whether v, a field or variable of rewritten code, keeps
// the sync type it was declared with swapped (it was not kept). A field
// of an instance of a generic type is its origin's.
func (a *Analysis) Swapped(v *types.Var) bool {
	d, ok := a.decl[v.Origin()]
	return ok && !a.kept[d.expr]
}

// methodExprs notes the method expressions of swapped types in f,
// (*sync.Mutex).Lock, before any flow is linked: such a method expression
// is rewritten with its type, to lockorder's method, so the receiver
// parameter of its func type is no foreign code's, and a lock it is called
// on (directly, or through a variable, a field or an argument of its
// type) is swapped with it.
func (a *Analysis) methodExprs(f *ast.File, info *types.Info) {
	ast.Inspect(f, func(n ast.Node) bool {
		x, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if sel := info.Selections[x]; sel != nil && sel.Kind() == types.MethodExpr && carriesSync(sel.Recv()) {
			if sig, ok := info.TypeOf(x).(*types.Signature); ok && sig.Params().Len() > 0 {
				// The receiver parameter is the method expression's
				// slot: kept, it keeps the expression sync.
				recv := sig.Params().At(0)
				a.methodSlots[x] = recv
				a.decl[recv] = declOf{x.X, info}
			}
		}
		return true
	})
}
