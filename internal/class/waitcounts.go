package class

import "sync/atomic"

// WaitCounts accumulates a lock's short contended waits for lockorder's
// wait profile, so that recording one is two atomic adds on the lock's own
// counters rather than an update of a shared table under a lock.
type WaitCounts struct {
	// Gen is the wait profile's generation the counts belong to: the
	// profile starts a new one when it is reset.
	Gen          uint64
	Count, Delay atomic.Int64
}

// waitCounter is where a lock's short waits are counted, for lockorder's
// wait profile. A Lock embeds one, and its methods are called on the
// Lock.
type waitCounter struct {
	p atomic.Pointer[WaitCounts]
}

// WaitCounts returns the counters set by SetWaitCounts, or nil.
func (w *waitCounter) WaitCounts() *WaitCounts { return w.p.Load() }

// SetWaitCounts sets the counters the lock's short waits are added to.
func (w *waitCounter) SetWaitCounts(c *WaitCounts) { w.p.Store(c) }
