package waitfor

import "testing"

// A goroutine trimming goroutine states after a collection (which each
// leak check starts) ends and wakes nobody: it does not keep a program
// whose other goroutines are blocked from looking all blocked. Any other
// running goroutine does. (The goroutines' ids are far from any the
// test's own goroutine may have: blockedBut skips the caller's.)
func TestAllBlockedLooksPastTheTrim(t *testing.T) {
	const blocked = `goroutine 900007 [semacquire]:
sync.runtime_SemacquireMutex(0x0?, 0x0?, 0x0?)
	/usr/local/go/src/runtime/sema.go:95 +0x25
main.f()
	/x/main.go:10 +0x1d
created by main.main in goroutine 1
	/x/main.go:20 +0x25`
	const trimming = `goroutine 900009 [running]:
github.com/syncwatch/syncwatch/internal/gls.Trim()
	/x/internal/gls/gls.go:460 +0x25
github.com/syncwatch/syncwatch/internal/gls.trimAfterGC.func1({})
	/x/internal/gls/gls.go:580 +0x13
runtime.runCleanups()
	/usr/local/go/src/runtime/mcleanup.go:650 +0x1e5`
	const trimming127 = `goroutine 900010 [runnable]:
github.com/syncwatch/syncwatch/internal/gls.Trim()
	/x/internal/gls/gls.go:460 +0xb6
github.com/syncwatch/syncwatch/internal/gls.trimAfterGC.1({})
	/x/internal/gls/gls.go:580 +0x13
runtime.runCleanups()
	/usr/local/go/src/runtime/mcleanup.go:745 +0xd4`
	const other = `goroutine 900011 [running]:
main.spin()
	/x/main.go:30 +0x1d`
	g := &Graph{}
	for _, trim := range []string{trimming, trimming127} {
		if all, _ := allBlocked(parseDump([]byte(blocked+"\n\n"+trim)), g); !all {
			t.Error("the trim kept the program from looking all blocked")
		}
	}
	if all, busy := allBlocked(parseDump([]byte(blocked+"\n\n"+other)), g); all || !busy {
		t.Errorf("a running goroutine: all blocked %v, busy %v; want false, true", all, busy)
	}
	// Another cleanup running: not all blocked, but worth another look
	// without another collection.
	const cleanup = `goroutine 900012 [runnable]:
github.com/syncwatch/syncwatch/internal/class.lastLockGone(0xc000028370)
	/x/internal/class/named.go:111 +0x3b
runtime.runCleanups()
	/usr/local/go/src/runtime/mcleanup.go:745 +0xd4`
	if all, _, cleaning := blockedBut(parseDump([]byte(blocked+"\n\n"+cleanup)), g); all || !cleaning {
		t.Errorf("a cleanup running: all blocked %v, cleaning %v; want false, true", all, cleaning)
	}
	if _, _, cleaning := blockedBut(parseDump([]byte(blocked+"\n\n"+cleanup+"\n\n"+other)), g); cleaning {
		t.Error("a cleanup and another goroutine running: cleaning")
	}
}
