package lockordertest

import (
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// blockedFloor is how long a goroutine must have been blocked in a
// syncwatch wait to be reported as blocked at exit: long enough that a
// holder waiting on a short timer, a network reply or a context is not
// taken for stuck.
const blockedFloor = time.Second

// settle waits, at most max, until every goroutine but the caller has
// finished or is blocked, and every syncwatch wait has lasted blockedFloor
// (so that one still blocked then is stuck, not passing through).
func settle(max time.Duration) {
	self := goid.ID()
	deadline := time.Now().Add(max)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		if quiet(self) && waitsOld() {
			return
		}
		if !time.Now().Before(deadline) {
			return
		}
		time.Sleep(min(pause, time.Until(deadline)))
	}
}

// waitsOld reports whether every registered wait has lasted blockedFloor.
func waitsOld() bool {
	for _, w := range waitfor.All() {
		if w.Age() < blockedFloor {
			return false
		}
	}
	return true
}

// quiet reports whether every goroutine but self is blocked: none is
// running, runnable or sleeping. (One in a system call, such as
// os/signal's, counts as blocked.)
func quiet(self int64) bool {
	for id, state := range waitfor.Fresh().States() {
		if id == self {
			continue
		}
		if i := strings.IndexByte(state, ','); i >= 0 {
			state = state[:i] // "syscall, locked to thread"
		}
		switch state {
		case "running", "runnable", "sleep", "":
			return false
		}
	}
	return true
}
