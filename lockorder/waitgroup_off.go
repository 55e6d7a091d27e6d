//go:build syncwatch_off

package lockorder

import "sync"

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
