package lockordertest

import (
	"strings"
	"time"

	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// settlePoll is how often settle looks at the goroutines.
const settlePoll = 20 * time.Millisecond

// settle waits, at most max, until no goroutine but the caller is running,
// runnable, sleeping or in a system call: every other goroutine has
// finished or is blocked. It reports whether that happened.
func settle(max time.Duration) bool {
	self := goid.ID()
	deadline := time.Now().Add(max)
	for {
		if quiet(self) {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(settlePoll)
	}
}

// quiet reports whether every goroutine but self is blocked.
func quiet(self int64) bool {
	for id, state := range waitfor.Fresh().States() {
		if id == self {
			continue
		}
		if i := strings.IndexByte(state, ','); i >= 0 {
			state = state[:i] // "syscall, locked to thread"
		}
		switch state {
		case "running", "runnable", "syscall", "sleep", "":
			return false
		}
	}
	return true
}
