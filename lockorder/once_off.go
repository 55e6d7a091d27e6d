//go:build syncwatch_off

package lockorder

import (
	"sync"
	"time"
)

// Once, WaitGroup and Cond in the syncwatch_off build: sync's, with
// nothing added.

// Once is a sync.Once; the syncwatch_off build tag removed the checks.
type Once struct{ o sync.Once }

// Do calls f if and only if Do is being called for the first time.
func (o *Once) Do(f func()) { o.o.Do(f) }

// A WaitGroup is a sync.WaitGroup; the syncwatch_off build tag removed the
// checks.
type WaitGroup struct{ wg sync.WaitGroup }

// Add adds delta to the counter.
func (wg *WaitGroup) Add(delta int) { wg.wg.Add(delta) }

// Done decrements the counter by one.
func (wg *WaitGroup) Done() { wg.wg.Done() }

// Wait blocks until the counter is zero.
func (wg *WaitGroup) Wait() { wg.wg.Wait() }

// Go calls f in a new goroutine and adds that task to the WaitGroup.
func (wg *WaitGroup) Go(f func()) { wg.wg.Go(f) }

// condID is empty: nothing is named in this build.
type condID struct{}

// block waits for ch to be closed by Signal or Broadcast.
func (c *Cond) block(w *condWaiter) { c.await(w) }

// applyMonitor has no monitor to configure in this build.
func applyMonitor(*config, uint32) {}

// ReportBlocked reports nothing: nothing is tracked in this build.
func ReportBlocked(minAge time.Duration) int { return 0 }

// ReportBlockedExcept reports nothing: nothing is tracked in this build.
func ReportBlockedExcept(minAge time.Duration, leaks bool, ignore func(Violation) bool) int {
	return 0
}
