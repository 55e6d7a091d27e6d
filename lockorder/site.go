//go:build !syncwatch_off

package lockorder

import (
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/syncwatch/syncwatch/internal/class"
)

// Sites. A zero-value lock has no name of its own, so it is named after
// the code that first locks it (or first uses it, for a Once, a WaitGroup
// or a Cond): "store.(*DB).beginTx (db.go:801)#2" is the second
// lock first locked there. The place is found once per lock, when its
// identity is made: the return addresses of a few frames are taken, and
// the first frame outside lockorder (and the runtime) is the site. What a
// return address resolves to is kept per address, so that a frame is
// resolved once for the life of the program, whatever the number of locks
// first locked there; the table is bounded by the program's text.

// maxSiteFrames is how many frames callerSite looks at: lockorder's own
// frames between a method and the place its identity is made, which are
// at most five, a promoted method's wrapper or sync.Cond.Wait, and the
// caller's.
const maxSiteFrames = 8

// siteFramesFirst is how many frames callerSite looks at first: initLock,
// the method's own (up to four: Lock, lockSlow, lock for a Mutex), and
// the program's that called it.
const siteFramesFirst = 6

// pkgPath is lockorder's import path. Frames of functions in it, but not
// in its test files, are lockorder's own.
var pkgPath = reflect.TypeFor[Mutex]().PkgPath()

var sites struct {
	byPC   sync.Map // uintptr -> *class.Site; nil: the frame is lockorder's, sync's or the runtime's
	mu     sync.Mutex
	byLine map[siteKey]*class.Site
}

type siteKey struct {
	fn, file string // the function's full name, and the file's path
	line     int
}

// callerSite returns the site of the code that called into lockorder, or
// nil if none is found within maxSiteFrames frames.
func callerSite() *class.Site {
	// Unwinding costs by the frame: the place is almost always within
	// the first few, so look there before unwinding all maxSiteFrames.
	var pcs [maxSiteFrames]uintptr
	for _, depth := range [...]int{siteFramesFirst, maxSiteFrames} {
		n := runtime.Callers(2, pcs[:depth]) // from callerSite's caller
		if s := siteIn(pcs[:n]); s != nil {
			return s
		}
		if n < depth {
			break
		}
	}
	return nil
}

// siteIn returns the site of the first of the return addresses pcs
// (innermost first) that is not lockorder's, sync's or the runtime's, or
// nil if there is none.
func siteIn(pcs []uintptr) *class.Site {
	for _, pc := range pcs {
		if s := siteOf(pc); s != nil {
			return s
		}
	}
	return nil
}

// siteOf returns the site of the return address pc: the innermost function
// inlined there (or the function itself) that is not lockorder's, or nil.
func siteOf(pc uintptr) *class.Site {
	if s, ok := sites.byPC.Load(pc); ok {
		return s.(*class.Site)
	}
	var s *class.Site
	fs := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := fs.Next()
		if f.Function != "" && !internalFrame(f.Function, f.File) {
			s = intern(siteKey{f.Function, f.File, f.Line})
			break
		}
		if !more {
			break
		}
	}
	sites.byPC.Store(pc, s)
	return s
}

// intern returns the site of k, one per place, so that two return
// addresses of one line (a function inlined in two callers) number their
// locks in one sequence.
func intern(k siteKey) *class.Site {
	sites.mu.Lock()
	defer sites.mu.Unlock()
	if s := sites.byLine[k]; s != nil {
		return s
	}
	if sites.byLine == nil {
		sites.byLine = make(map[siteKey]*class.Site)
	}
	s := &class.Site{Func: shortFunc(k.fn), File: baseName(k.file), Line: k.line}
	sites.byLine[k] = s
	return s
}

// internalFrame reports whether a frame of function fn in file is the
// runtime's, sync's (a sync.Cond relocking its Locker) or lockorder's own
// (not its tests').
func internalFrame(fn, file string) bool {
	if strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "sync.") {
		return true
	}
	return strings.HasPrefix(fn, pkgPath) && strings.HasPrefix(fn[len(pkgPath):], ".") &&
		!strings.HasSuffix(file, "_test.go")
}

// shortFunc drops the import path from a function's name, but for a
// major-version suffix: "example.com/store.(*DB).beginTx" is
// "store.(*DB).beginTx", "go.etcd.io/bbolt/v2.(*DB).View" is
// "bbolt/v2.(*DB).View", and an escaped dot in the last element
// ("gopkg.in/yaml%2ev3.Marshal") is a dot again ("yaml.v3.Marshal").
func shortFunc(fn string) string {
	end := len(fn)
	if i := strings.IndexByte(fn, '['); i >= 0 {
		end = i // type arguments may hold import paths
	}
	short := fn
	if i := strings.LastIndexByte(fn[:end], '/'); i >= 0 {
		short = fn[i+1:]
		if j := strings.LastIndexByte(fn[:i], '/'); j >= 0 && majorVersion(short) {
			short = fn[j+1:]
		}
	}
	return strings.ReplaceAll(short, "%2e", ".")
}

// majorVersion reports whether s, a function name past the last slash of
// its import path, is in a package path element "v2", "v3"...
func majorVersion(s string) bool {
	dot := strings.IndexByte(s, '.')
	if dot < 2 || s[0] != 'v' {
		return false
	}
	for _, c := range s[1:dot] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// baseName returns the last element of a file path.
func baseName(file string) string {
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[i+1:]
	}
	return file
}
