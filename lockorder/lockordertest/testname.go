package lockordertest

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/syncwatch/syncwatch/lockorder"
)

// testOf returns the name of the test, benchmark, example or fuzz target
// whose code appears in v's stacks (the goroutine that found it, then the
// edges of a cycle), or "" if none does.
func testOf(v lockorder.Violation) string {
	stacks := []lockorder.Stack{v.Stack}
	for _, e := range v.Cycle {
		stacks = append(stacks, e.Stack)
	}
	for _, st := range stacks {
		for i := len(st) - 1; i >= 0; i-- {
			if name := testName(st[i].Function); name != "" {
				return name
			}
		}
	}
	return ""
}

// testName returns "TestFoo" for a function "path/pkg.TestFoo" or one of
// its closures ("path/pkg.TestFoo.func1"), and "" for anything else.
func testName(fn string) string {
	fn = fn[strings.LastIndexByte(fn, '/')+1:]
	dot := strings.IndexByte(fn, '.')
	if dot < 0 {
		return ""
	}
	name := fn[dot+1:]
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	for _, prefix := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			// As go test: TestFoo, Test_foo and Test count; Testify does not.
			if r, _ := utf8.DecodeRuneInString(rest); rest == "" || !unicode.IsLower(r) {
				return name
			}
		}
	}
	return ""
}
