package stack_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/syncwatch/syncwatch/internal/stack"
)

//go:noinline
func captureHere() stack.ID { return stack.Capture() }

func TestCaptureStartsAtCaller(t *testing.T) {
	id := captureHere()
	if id == 0 {
		t.Fatal("Capture returned the zero ID")
	}
	fs := stack.Frames(id)
	if len(fs) == 0 {
		t.Fatal("no frames")
	}
	// Frames of internal/ packages are dropped, so the first frame is the
	// test's own helper... which lives in package stack_test, not internal.
	if !strings.HasSuffix(fs[0].Function, "stack_test.captureHere") {
		t.Fatalf("first frame %q, want captureHere", fs[0].Function)
	}
	if !strings.HasSuffix(fs[0].File, "stack_test.go") || fs[0].Line == 0 {
		t.Fatalf("first frame at %s:%d", fs[0].File, fs[0].Line)
	}
	for _, f := range fs {
		if strings.HasPrefix(f.Function, "runtime.") {
			t.Errorf("runtime frame kept: %s", f.Function)
		}
	}
	if !strings.Contains(stack.Format(id, "  "), "TestCaptureStartsAtCaller") {
		t.Errorf("Format lacks the test function:\n%s", stack.Format(id, "  "))
	}
}

func TestInternedOnce(t *testing.T) {
	var ids []stack.ID
	for range 3 {
		ids = append(ids, captureHere())
	}
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Fatalf("same call site gave ids %v", ids)
	}
	other := stack.Capture()
	if other == ids[0] {
		t.Fatal("different call sites share an id")
	}
	if stack.Frames(0) != nil || stack.Top(0) != (stack.Frame{}) {
		t.Fatal("zero ID has frames")
	}
}

func TestGoroutineOfAnother(t *testing.T) {
	started, release := make(chan int64), make(chan struct{})
	go func() {
		started <- idOfSelf()
		parkHere(release)
	}()
	id := <-started
	defer close(release)
	var text string
	for range 1000 { // wait until it is parked
		if text = stack.Goroutine(id); strings.Contains(text, "parkHere") {
			break
		}
		runtime.Gosched()
	}
	header, frames := stack.ParseGoroutine(text)
	if !strings.HasPrefix(header, "goroutine ") || len(frames) == 0 {
		t.Fatalf("header %q frames %v\n%s", header, frames, text)
	}
	if !strings.HasSuffix(frames[0].Function, "stack_test.parkHere") || frames[0].Line == 0 {
		t.Fatalf("top frame %+v", frames[0])
	}
	if stack.Goroutine(1<<60) != "" {
		t.Fatal("found a goroutine that does not exist")
	}
}

//go:noinline
func parkHere(c chan struct{}) { <-c }

func idOfSelf() int64 {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	var id int64
	fmt.Sscanf(string(b[:n]), "goroutine %d ", &id)
	return id
}

func TestOrigin(t *testing.T) {
	text := `goroutine 7 [sync.Cond.Wait (leaked)]:
sync.runtime_notifyListWait(0xc000012345, 0x0)
	/go/src/runtime/sema.go:606 +0x15d
sync.(*Cond).Wait(0xc000012340)
	/go/src/sync/cond.go:71 +0x85
main.worker(...)
	/src/main.go:12
created by main.run in goroutine 1
	/src/main.go:30 +0x2a`
	top, created := stack.Origin(text)
	if top != "sync.runtime_notifyListWait" {
		t.Errorf("top %q, want sync.runtime_notifyListWait", top)
	}
	if want := (stack.Frame{Function: "main.run", File: "/src/main.go", Line: 30}); created != want {
		t.Errorf("created %+v, want %+v", created, want)
	}
	if _, created := stack.Origin("goroutine 1 [running]:\nmain.main()\n\t/src/main.go:5 +0x1"); created != (stack.Frame{}) {
		t.Errorf("created %+v for the main goroutine, want none", created)
	}
}

// A capture of a stack seen before allocates nothing: its array stays on
// the caller's stack (the table keeps a copy of a new one). Every check-mode
// acquisition that records a new chain captures.
func TestCaptureOfAKnownStackDoesNotAllocate(t *testing.T) {
	captureHere()
	if n := testing.AllocsPerRun(100, func() { captureHere() }); n != 0 {
		t.Fatalf("Capture of a known stack: %v allocations, want 0", n)
	}
	var tr stack.Trace
	take := func() stack.ID { tr.Take(); return tr.ID() }
	take()
	if n := testing.AllocsPerRun(100, func() { take() }); n != 0 {
		t.Fatalf("Trace.Take and ID of a known stack: %v allocations, want 0", n)
	}
}

//go:noinline
func traceHere(t *stack.Trace) { t.Take() }

// A Trace gives the return addresses it took and, asked, the stack's id:
// the frames Capture would give from the same place, its caller first.
func TestTraceGivesAddressesAndID(t *testing.T) {
	var tr stack.Trace
	if tr.Taken() || tr.ID() != 0 {
		t.Fatal("the zero Trace is taken")
	}
	traceHere(&tr)
	if !tr.Taken() || len(tr.PCs()) == 0 {
		t.Fatal("Take recorded nothing")
	}
	f, _ := runtime.CallersFrames(tr.PCs()).Next()
	if !strings.HasSuffix(f.Function, "stack_test.traceHere") {
		t.Fatalf("first address in %s, want traceHere", f.Function)
	}
	id := tr.ID()
	if id == 0 || tr.ID() != id {
		t.Fatalf("ID gave %d, then %d", id, tr.ID())
	}
	fs := stack.Frames(id)
	if len(fs) < 2 || !strings.HasSuffix(fs[0].Function, "stack_test.traceHere") ||
		!strings.HasSuffix(fs[1].Function, "TestTraceGivesAddressesAndID") {
		t.Fatalf("frames %v, want traceHere then the test", fs)
	}
}

// A deep stack's text has one line between its innermost and outermost
// frames ("...N frames elided..."): the frames past it are read as
// frames, and where the goroutine was started is found.
func TestParseGoroutinePastElidedFrames(t *testing.T) {
	text := "goroutine 7 [chan receive]:\n" +
		"main.inner()\n\t/x/a.go:1 +0x1\n" +
		"...51 frames elided...\n" +
		"main.outer(0xc000012345)\n\t/x/a.go:2 +0x2\n" +
		"created by main.main in goroutine 1\n\t/x/a.go:3 +0x3"
	_, frames := stack.ParseGoroutine(text)
	want := []stack.Frame{{Function: "main.inner", File: "/x/a.go", Line: 1}, {Function: "main.outer", File: "/x/a.go", Line: 2}}
	if len(frames) != len(want) || frames[0] != want[0] || frames[1] != want[1] {
		t.Fatalf("frames = %+v, want %+v", frames, want)
	}
	if top, created := stack.Origin(text); top != "main.inner" || created.Function != "main.main" || created.Line != 3 {
		t.Fatalf("Origin = %q, %+v", top, created)
	}
}

// captureAt captures a stack depth frames below its caller: each depth
// is a stack of its own.
//
//go:noinline
func captureAt(depth int) stack.ID {
	if depth == 0 {
		return stack.Capture()
	}
	return captureAt(depth - 1)
}

// A stack is symbolized when its frames are first asked for, once, and
// never when it is captured: most stacks captured are never reported.
func TestStacksAreSymbolizedWhenFirstShown(t *testing.T) {
	before := stack.Symbolized()
	ids := make([]stack.ID, 8)
	for i := range ids {
		ids[i] = captureAt(i)
	}
	if n := stack.Symbolized() - before; n != 0 {
		t.Fatalf("capturing 8 new stacks symbolized %d", n)
	}
	fs := stack.Frames(ids[3])
	if n := stack.Symbolized() - before; n != 1 {
		t.Fatalf("showing one stack symbolized %d", n)
	}
	if got := strings.Count(fmt.Sprint(fs), "captureAt"); got != 4 {
		t.Errorf("frames show captureAt %d times, want 4: %v", got, fs)
	}
	stack.Frames(ids[3])
	if n := stack.Symbolized() - before; n != 1 {
		t.Fatalf("showing it again symbolized %d in all", n)
	}
}

// Parent reads the id of the goroutine that started another from the
// runtime's own text of it; main's text, and one cut short, name none.
func TestParentIsTheStartersID(t *testing.T) {
	own := func() (text string) {
		buf := make([]byte, 4096)
		return string(buf[:runtime.Stack(buf, false)])
	}
	idOf := func(text string) int64 {
		var id int64
		fmt.Sscanf(text, "goroutine %d ", &id)
		return id
	}
	me := idOf(own())
	child := make(chan string)
	go func() { child <- own() }()
	if got := stack.Parent(<-child); got != me || me == 0 {
		t.Fatalf("Parent = %d, want the starter %d", got, me)
	}
	for _, text := range []string{
		"goroutine 1 [running]:\nmain.main()\n\t/x/a.go:1 +0x1",
		"goroutine 7 [running]:\nmain.f()\n\t/x/a.go:1 +0x1\ncreated by main.main\n\t/x/a.go:2 +0x2",
	} {
		if got := stack.Parent(text); got != 0 {
			t.Errorf("Parent(%q) = %d, want 0", text, got)
		}
	}
}
