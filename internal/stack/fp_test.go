package stack_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/syncwatch/syncwatch/internal/stack"
)

type shape struct{ depth int }

func (s shape) value(f func()) { f() }

func (s *shape) pointer(f func()) { s.value(f) }

type caller interface{ value(func()) }

//go:noinline
func recurse(n int, f func()) {
	if n == 0 {
		f()
		return
	}
	recurse(n-1, f)
}

func generic[T any](v T, f func(T)) { f(v) }

func inlined(f func()) { f() } // small: inlined into its callers

// A stack taken by following frame pointers shows, frame for frame, what
// runtime.Callers shows: inlined calls, method values and the wrappers
// of interface and pointer-receiver calls, closures, generic functions,
// recursion past MaxDepth, a goroutine's first frame. The first address
// a Trace keeps is its caller's.
func TestFramePointersShowWhatCallersShows(t *testing.T) {
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		if runtime.NumCgoCall() == 0 && stack.FPSkip() < 0 {
			t.Fatal("frame pointers are not followed in a program without cgo")
		}
	}
	check := func(name string) {
		fast, slow, trace := stack.Both()
		got, want := stack.Frames(fast), stack.Frames(slow)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: frame pointers show\n%v\nruntime.Callers shows\n%v", name, got, want)
		}
		fs := runtime.CallersFrames(trace)
		f, more := fs.Next()
		if !strings.HasSuffix(f.Function, "internal/stack.Both") || !more {
			t.Errorf("%s: a Trace starts at %s, not at its taker's", name, f.Function)
		}
		if f, _ = fs.Next(); f.Function != want[0].Function || f.Line != want[0].Line {
			t.Errorf("%s: a Trace goes on at %s:%d, want %s:%d", name, f.Function, f.Line, want[0].Function, want[0].Line)
		}
	}
	check("direct")
	inlined(func() { check("inlined") })
	s := &shape{}
	mv := s.value
	mv(func() { check("method value") })
	var c caller = s
	c.value(func() { check("interface call of a value method through a pointer") })
	s.pointer(func() { check("pointer receiver") })
	generic(3, func(int) { check("generic") })
	recurse(stack.MaxDepth+10, func() { check("recursion past MaxDepth") })
	recurse(3, func() { inlined(func() { check("inlined under recursion") }) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		check("a goroutine's first frame")
	}()
	<-done
	defer func() { check("a deferred call") }()
}
