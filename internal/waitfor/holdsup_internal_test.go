package waitfor

import "testing"

// Goroutines blocked for good hold the program up when one of them is a
// test's or benchmark's, or main, unless main parked itself on purpose
// (select {}); a worker blocked for good is a leak the program goes on
// without.
func TestHoldsUp(t *testing.T) {
	const worker = `goroutine 21 [sync.WaitGroup.Wait (leaked)]:
sync.runtime_SemacquireWaitGroup(0x0?, 0x0?)
	/usr/local/go/src/runtime/sema.go:114 +0x2e
main.wait.func1()
	/x/main_test.go:10 +0x1d
created by main.wait in goroutine 7
	/x/main_test.go:8 +0x25`
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
		{"a worker alone", []string{worker}, false},
		{"a worker and a running test", []string{testRunning, worker}, false},
		{"a worker and main parked in select {}", []string{mainParked, worker}, false},
		{"a worker and a test", []string{test, worker}, true},
		{"a worker and a benchmark", []string{bench, worker}, true},
		{"a worker and main", []string{mainStuck, worker}, true},
	} {
		text := ""
		for _, g := range c.dump {
			text += g + "\n\n"
		}
		if got := parseDump([]byte(text)).HoldsUp(); got != c.holds {
			t.Errorf("%s: HoldsUp = %v, want %v", c.name, got, c.holds)
		}
	}
}
