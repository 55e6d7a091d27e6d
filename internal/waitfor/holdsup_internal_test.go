package waitfor

import (
	"fmt"
	"strings"
	"testing"
)

// leakedWorker is a dump's text of a worker blocked for good on a
// WaitGroup: a leak that holds nothing up.
const leakedWorker = `goroutine 21 [sync.WaitGroup.Wait (leaked)]:
sync.runtime_SemacquireWaitGroup(0x0?, 0x0?)
	/usr/local/go/src/runtime/sema.go:114 +0x2e
main.wait.func1()
	/x/main_test.go:10 +0x1d
created by main.wait in goroutine 7
	/x/main_test.go:8 +0x25`

// Goroutines blocked for good hold the program up when one of them is a
// test's or benchmark's, or main, unless main parked itself on purpose
// (select {}); a worker blocked for good is a leak the program goes on
// without.
func TestHoldsUp(t *testing.T) {
	const test = `goroutine 7 [chan receive (leaked)]:
main.TestHangs(0xc000102000)
	/x/main_test.go:20 +0x3d
testing.tRunner(0xc000102000, 0x5a3b10)
	/usr/local/go/src/testing/testing.go:1934 +0xea
created by testing.(*T).Run in goroutine 1
	/usr/local/go/src/testing/testing.go:1997 +0x465`
	const bench = `goroutine 8 [chan receive (leaked)]:
main.BenchmarkHangs(0xc000104000)
	/x/main_test.go:30 +0x3d
testing.(*B).runN(0xc000104000, 0x1)
	/usr/local/go/src/testing/benchmark.go:219 +0x190
testing.(*B).run1.func1()
	/usr/local/go/src/testing/benchmark.go:245 +0x48
created by testing.(*B).run1 in goroutine 1
	/usr/local/go/src/testing/benchmark.go:238 +0x90`
	const mainStuck = `goroutine 1 [chan receive (leaked)]:
main.main()
	/x/main.go:20 +0x3d`
	const mainParked = `goroutine 1 [select (no cases) (leaked)]:
main.main()
	/x/main.go:20 +0x3d`
	const testRunning = `goroutine 7 [running]:
main.TestGoesOn(0xc000102000)
	/x/main_test.go:20 +0x3d
testing.tRunner(0xc000102000, 0x5a3b10)
	/usr/local/go/src/testing/testing.go:1934 +0xea`
	for _, c := range []struct {
		name  string
		dump  []string
		holds bool
	}{
		{"a worker alone", []string{leakedWorker}, false},
		{"a worker and a running test", []string{testRunning, leakedWorker}, false},
		{"a worker and main parked in select {}", []string{mainParked, leakedWorker}, false},
		{"a worker and a test", []string{test, leakedWorker}, true},
		{"a worker and a benchmark", []string{bench, leakedWorker}, true},
		{"a worker and main", []string{mainStuck, leakedWorker}, true},
	} {
		text := ""
		for _, g := range c.dump {
			text += g + "\n\n"
		}
		if got := parseDump([]byte(text)).holdsUp(); got != c.holds {
			t.Errorf("%s: holdsUp = %v, want %v", c.name, got, c.holds)
		}
	}
}

// A test's goroutine blocked for good deep in its code: the runtime prints
// its 50 innermost and 50 outermost frames, with one line, "...N frames
// elided...", between them (Go 1.21 on). testing.tRunner is among the
// outermost, and the test cannot end: it holds the program up. Its parent
// is not marked leaked here (a goroutine still running, or asleep, can
// reach the test's *testing.T, as a progress logger does).
func TestHoldsUpSeesTheTestOfAnElidedStack(t *testing.T) {
	const parent = `goroutine 1 [chan receive]:
testing.(*T).Run(0xc000102000, {0x5a3b10, 0x5}, 0x5a3b18)
	/usr/local/go/src/testing/testing.go:2005 +0x485
testing.runTests.func1(0xc000102000)
	/usr/local/go/src/testing/testing.go:2477 +0x37
testing.tRunner(0xc000102000, 0x5a3b20)
	/usr/local/go/src/testing/testing.go:1934 +0xea
testing.runTests(0xc000010030, {0x5a3b30, 0x1, 0x1}, {0x0, 0x0, 0x0})
	/usr/local/go/src/testing/testing.go:2475 +0x4b4
testing.(*M).Run(0xc000104000)
	/usr/local/go/src/testing/testing.go:2337 +0x63a
main.main()
	_testmain.go:45 +0x9b`
	var b strings.Builder
	b.WriteString("goroutine 7 [chan receive (leaked)]:\n")
	b.WriteString("main.TestDeep.func1()\n\t/x/main_test.go:30 +0x1d\n")
	for range 49 {
		b.WriteString("main.recurse(0x0?, 0xc000012345)\n\t/x/main_test.go:40 +0x25\n")
	}
	b.WriteString("...51 frames elided...\n")
	for range 49 {
		b.WriteString("main.recurse(0x0?, 0xc000012345)\n\t/x/main_test.go:42 +0x25\n")
	}
	b.WriteString("main.TestDeep(0xc000102000)\n\t/x/main_test.go:20 +0x3d\n")
	b.WriteString("testing.tRunner(0xc000102000, 0x5a3b10)\n\t/usr/local/go/src/testing/testing.go:1934 +0xea\n")
	b.WriteString("created by testing.(*T).Run in goroutine 1\n\t/usr/local/go/src/testing/testing.go:1997 +0x465")
	deep := b.String()
	text := fmt.Sprintf("%s\n\n%s\n\n%s\n\n", parent, deep, leakedWorker)
	d := parseDump([]byte(text))
	if !d.holdsUp() {
		r, _ := d.Routine(7)
		last := r.Frames[len(r.Frames)-3:]
		t.Errorf("holdsUp = false for a test's goroutine blocked for good (its outermost frames as parsed: %q)", last)
	}
}
