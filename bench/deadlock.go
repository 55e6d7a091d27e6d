package bench

import (
	"io"
	"sync/atomic"

	deadlock "github.com/sasha-s/go-deadlock"
)

// deadlockReports counts go-deadlock's calls to Opts.OnPotentialDeadlock.
var deadlockReports atomic.Int64

// init makes go-deadlock safe to measure in any process that imports this
// package: its default reaction to a potential deadlock is os.Exit(2) and
// its report goes to standard error, with every goroutine's lock stacks.
// Here a report is counted instead (see [DeadlockReports]) and its text is
// discarded. Every other option keeps its default (a 30s lock-wait timeout,
// 65536 remembered lock pairs). go-deadlock's options are an unsynchronised
// global, so they are set here, before any of its locks can be taken.
func init() {
	deadlock.Opts.OnPotentialDeadlock = func() { deadlockReports.Add(1) }
	deadlock.Opts.LogBuf = io.Discard
}

// DeadlockReports returns how many potential deadlocks go-deadlock has
// reported in this process. go-deadlock's callback receives no data, so
// the count is all there is to know. It is safe to call from any
// goroutine.
func DeadlockReports() int64 { return deadlockReports.Load() }
