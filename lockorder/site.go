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
// the code that first locks it (or first waits on it, for a Once, a
// WaitGroup or a Cond): "store.(*DB).beginTx (db.go:801)#2" is the second
// lock first locked there. The place is found once per lock, when its
// identity is made: the return addresses of a few frames are taken, and
// the first frame outside lockorder (and the runtime) is the site. What a
// return address resolves to is kept per address, so that a frame is
// resolved once for the life of the program, whatever the number of locks
// first locked there; the table is bounded by the program's text.

// maxSiteFrames is how many frames callerSite looks at: enough for
// lockorder's own frames between a method and the place its identity is
// made, which are at most five.
const maxSiteFrames = 8

// pkgPath is lockorder's import path. Frames of functions in it, but not
// in its test files, are lockorder's own.
var pkgPath = reflect.TypeFor[Mutex]().PkgPath()

var sites struct {
	mu     sync.RWMutex
	byPC   map[uintptr]*class.Site // nil: the frame is lockorder's or the runtime's
	byLine map[siteKey]*class.Site
}

type siteKey struct {
	fn, file string
	line     int
}

// callerSite returns the site of the code that called into lockorder, or
// nil if none is found within maxSiteFrames frames.
func callerSite() *class.Site {
	var pcs [maxSiteFrames]uintptr
	n := runtime.Callers(2, pcs[:]) // from callerSite's caller
	for _, pc := range pcs[:n] {
		if s := siteOf(pc); s != nil {
			return s
		}
	}
	return nil
}

// siteOf returns the site of the return address pc: the innermost function
// inlined there (or the function itself) that is not lockorder's, or nil.
func siteOf(pc uintptr) *class.Site {
	sites.mu.RLock()
	s, ok := sites.byPC[pc]
	sites.mu.RUnlock()
	if ok {
		return s
	}
	fs := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := fs.Next()
		if f.Function != "" && !internalFrame(f.Function, f.File) {
			s = intern(siteKey{shortFunc(f.Function), baseName(f.File), f.Line})
			break
		}
		if !more {
			break
		}
	}
	sites.mu.Lock()
	if sites.byPC == nil {
		sites.byPC = make(map[uintptr]*class.Site)
	}
	sites.byPC[pc] = s
	sites.mu.Unlock()
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
	s := &class.Site{Func: k.fn, File: k.file, Line: k.line}
	sites.byLine[k] = s
	return s
}

// internalFrame reports whether a frame of function fn in file is the
// runtime's or lockorder's own (not its tests').
func internalFrame(fn, file string) bool {
	if strings.HasPrefix(fn, "runtime.") {
		return true
	}
	return strings.HasPrefix(fn, pkgPath) && strings.HasPrefix(fn[len(pkgPath):], ".") &&
		!strings.HasSuffix(file, "_test.go")
}

// shortFunc drops the import path from a function's name:
// "example.com/store.(*DB).beginTx" is "store.(*DB).beginTx".
func shortFunc(fn string) string {
	end := len(fn)
	if i := strings.IndexByte(fn, '['); i >= 0 {
		end = i // type arguments may hold import paths
	}
	if i := strings.LastIndexByte(fn[:end], '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// baseName returns the last element of a file path.
func baseName(file string) string {
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[i+1:]
	}
	return file
}
