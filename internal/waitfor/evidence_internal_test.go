package waitfor

import "testing"

// A goroutine trimming goroutine states after a collection (which each
// leak check starts) ends and wakes nobody: it does not keep a program
// whose other goroutines are blocked from looking all blocked. Any other
// running goroutine does.
func TestAllBlockedLooksPastTheTrim(t *testing.T) {
	const blocked = `goroutine 7 [semacquire]:
sync.runtime_SemacquireMutex(0x0?, 0x0?, 0x0?)
	/usr/local/go/src/runtime/sema.go:95 +0x25
main.f()
	/x/main.go:10 +0x1d
created by main.main in goroutine 1
	/x/main.go:20 +0x25`
	const trimming = `goroutine 9 [running]:
github.com/syncwatch/syncwatch/internal/gls.Trim()
	/x/internal/gls/gls.go:460 +0x25
github.com/syncwatch/syncwatch/internal/gls.trimAfterGC.func1({})
	/x/internal/gls/gls.go:580 +0x13
runtime.runCleanups()
	/usr/local/go/src/runtime/mcleanup.go:650 +0x1e5`
	const other = `goroutine 11 [running]:
main.spin()
	/x/main.go:30 +0x1d`
	g := &Graph{}
	if all, _ := allBlocked(parseDump([]byte(blocked+"\n\n"+trimming)), g); !all {
		t.Error("the trim kept the program from looking all blocked")
	}
	if all, busy := allBlocked(parseDump([]byte(blocked+"\n\n"+other)), g); all || !busy {
		t.Errorf("a running goroutine: all blocked %v, busy %v; want false, true", all, busy)
	}
}
