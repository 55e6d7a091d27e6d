//go:build !syncwatch_off

package lockorder

import (
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// testName returns "TestFoo" for the function fn, in file, that is a test,
// benchmark, example or fuzz target of a _test.go file ("pkg.TestFoo"),
// a suite's method of that name ("pkg.(*Suite).TestFoo"), or one of
// their closures ("pkg.TestFoo.func1.2"), and "" for anything
// else: "pkg.TestFoo.helper.func1" is the closure of a function inlined
// in TestFoo, no test.
func testName(fn, file string) string {
	if !strings.HasSuffix(file, "_test.go") {
		return ""
	}
	fn = fn[strings.LastIndexByte(fn, '/')+1:]
	_, name, ok := strings.Cut(fn, ".")
	if !ok {
		return ""
	}
	name, rest, _ := strings.Cut(name, ".")
	if !isTestName(name) {
		// A suite's method: "pkg.(*Suite).TestFoo" (testify) or
		// "pkg.s.TestFoo" (a type whose methods one test runs as
		// subtests) is TestFoo.
		name, rest, _ = strings.Cut(rest, ".")
	}
	for _, part := range strings.Split(rest, ".") {
		// Closures are "func1", goroutines started by go statements
		// "gowrap1".
		digits := strings.TrimPrefix(strings.TrimPrefix(part, "func"), "gowrap")
		if part != "" && strings.TrimLeft(digits, "0123456789") != "" {
			return ""
		}
	}
	if isTestName(name) {
		return name
	}
	return ""
}

// isTestName reports whether name is one go test runs: TestFoo, Test_foo
// and Test count, Testify does not; so do benchmarks, examples and fuzz
// targets.
func isTestName(name string) bool {
	for _, prefix := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			if r, _ := utf8.DecodeRuneInString(rest); rest == "" || !unicode.IsLower(r) {
				return true
			}
		}
	}
	return false
}

// testOf returns the name of the test whose code appears in v's stacks
// (the goroutine that found it, then the edges of a cycle), or "".
func testOf(v *Violation) string {
	stacks := []Stack{v.Stack}
	for _, e := range v.Cycle {
		stacks = append(stacks, e.Stack)
	}
	for _, st := range stacks {
		for i := len(st) - 1; i >= 0; i-- {
			if name := testName(st[i].Function, st[i].File); name != "" {
				return name
			}
		}
	}
	return ""
}

// testByAncestry returns the test whose goroutine started, directly or
// through goroutines still running, one of v's goroutines (the one that
// found it, then those of a cycle's edges), or "": a server's or a pool's
// goroutine that a test started has no test in its own stack. Only under
// go test, and for at most maxAncestries records (since the start or the
// last Reset), since each may take a goroutine dump, which stops the world (a dump at most ancestryAge old
// that shows v's goroutine serves).
func testByAncestry(v *Violation) string {
	if !underTest() || ancestries.Add(1) > maxAncestries {
		return ""
	}
	gids := []int64{v.Goroutine}
	for _, e := range v.Cycle {
		gids = append(gids, e.Goroutine)
	}
	d := waitfor.Cached(ancestryAge)
	if d == nil || !d.Alive(v.Goroutine) {
		d = waitfor.Fresh() // it may be newer than the last dump
	}
	for _, g := range gids {
		for hops := 0; g != 0 && hops < maxHops; hops++ {
			r, ok := d.Routine(g)
			if !ok {
				break // exited: who started it is gone with it
			}
			for i := len(r.Frames) - 1; i >= 0; i-- {
				if name := testName(r.Frames[i].Function, r.Frames[i].File); name != "" {
					return name
				}
			}
			g = d.Parent(g)
		}
	}
	return ""
}

const (
	// maxAncestries bounds the records testByAncestry looks into.
	maxAncestries = 1024
	// ancestryAge is how old a dump testByAncestry uses may be.
	ancestryAge = 10 * time.Millisecond
	// maxHops bounds the goroutines testByAncestry climbs through.
	maxHops = 64
)

// ancestries counts testByAncestry's calls since the start or the last
// Reset.
var ancestries atomic.Int32

// maxTests bounds the test names a report keeps to count its Tests.
const maxTests = 64

// countTest adds test, the test an occurrence grouped under v came from
// ("" if none), to v's Tests.
func (v *Violation) countTest(test string) {
	if test == "" || len(v.tests) >= maxTests {
		return
	}
	for _, t := range v.tests {
		if t == test {
			return
		}
	}
	v.tests = append(v.tests, test)
	v.Tests = len(v.tests)
}
