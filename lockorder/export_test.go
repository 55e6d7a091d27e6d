//go:build !syncwatch_off

package lockorder

import (
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/hb"
	"github.com/syncwatch/syncwatch/internal/held"
	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// MaxPool is the largest pool of workers, each taking one edge, whose
// every sighting R21 keeps: past it their edge orders nothing.
const MaxPool = hb.MaxSighters

// MaxClockEntries is how many goroutines a clock names at most.
const MaxClockEntries = hb.MaxEntries

// GraphSize returns the number of nodes and edges in the order graph.
func GraphSize() (nodes, edges int) {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	return eng.graph.Len(), eng.graph.Edges()
}

// Chains returns the number of lock chains in the cache.
func Chains() int { return chains.Len() }

// FastPaths reports whether Lock, Unlock, RLock and RUnlock may take their
// inlined fast paths in the current mode.
func FastPaths() bool { return fastOff == 0 }

// LayoutOK reports whether sync's layout checked out, so that the fast
// paths may be used at all.
func LayoutOK() bool { return layoutOK }

// NamedClasses returns the number of named lock classes kept: those with
// a live lock, and those the graph keeps after their last lock died.
func NamedClasses() int { return class.Count() }

// ClassDormant reports whether the named class name is dormant: its last
// lock is collected, and the graph keeps the class.
func ClassDormant(name string) bool { return class.IsDormant(name) }

// MaxDormantClasses is how many named classes with no live lock the
// graph keeps.
const MaxDormantClasses = class.MaxDormant

// DeliverFinding gives f to the reporter of the monitor's findings, as the
// monitor's delivering goroutine does.
func DeliverFinding(f waitfor.Finding) { reportFinding(f) }

// ShortFunc is the function name a site is shown with.
func ShortFunc(fn string) string { return shortFunc(fn) }

// WaitingReadEdges returns the number of order edges from read holds that
// wait on the calling goroutine for its holds to prove its own.
func WaitingReadEdges() int {
	gs := gls.Find(goid.ID())
	if gs == nil {
		return 0
	}
	return gs.WaitingEdges()
}

// ProvingEdges returns the number of order edges from write holds that
// wait on the calling goroutine for its own Unlock (R23).
func ProvingEdges() int {
	gs := gls.Find(goid.ID())
	if gs == nil {
		return 0
	}
	return gs.ProvingEdges()
}

// MaxProvingEdges bounds ProvingEdges.
const MaxProvingEdges = held.MaxProving

// MaxWaitingReadEdges bounds WaitingReadEdges.
const MaxWaitingReadEdges = held.MaxWaiting

// InitHeld reports whether m's initialisation write is held, uncontended
// so far (see use).
func InitHeld(m *RWMutex) bool {
	l := m.l.Load()
	return l != nil && l.InitHeld()
}

// InitDone reports whether m's initialisation write was released, nothing
// having shown m shared so far: it does not count (see use).
func InitDone(m *RWMutex) bool {
	l := m.l.Load()
	return l != nil && l.InitDone()
}

// InitRule reports whether a lock's first write may be taken for its
// initialisation: the process has been in check mode since init.
func InitRule() bool { return initRule.Load() }

// FuncTestName is testName.
func FuncTestName(fn, file string) string { return testName(fn, file) }

// WithDeadlockGrace sets the monitor's grace period to d; 0 restores the
// default.
func WithDeadlockGrace(d time.Duration) Option {
	return optionFunc(func(s *settings) { s.grace = d })
}

// SetGoStartedOff makes WaitGroup.Go track its goroutines in its groups'
// own maps (as when a goroutine's window of the table is full) while off
// is set.
func SetGoStartedOff(off bool) { goStartedOff.Store(off) }

// WaitCountsGroup reports whether some goroutine is registered as
// waiting for wg with wg's counter as its progress (W3).
func WaitCountsGroup(wg *WaitGroup) bool {
	l := wg.l.Load()
	if l == nil {
		return false
	}
	for _, w := range waitfor.All() {
		if w.Kind == waitfor.KindWaitGroup && w.ObjectID == l.ID && w.Count != nil {
			if n, ok := w.Count(); ok && n == wg.n.Load() {
				return true
			}
		}
	}
	return false
}

// SlowWaitsFollowed counts the waits followed under long-wait records.
func SlowWaitsFollowed() int {
	slowWaits.mu.Lock()
	defer slowWaits.mu.Unlock()
	n := 0
	for _, t := range slowWaits.m {
		n += int(t.Followed())
	}
	return n
}

// HolderOf returns the goroutine holding m for writing, 0 if none (or if
// m was never locked in check mode).
func HolderOf(m *Mutex) int64 {
	if l := m.l.Load(); l != nil {
		return l.Holder()
	}
	return 0
}

// KeptWaits returns how many Waits wg keeps for its first Go (R22).
func KeptWaits(wg *WaitGroup) int {
	wg.mu.Lock()
	defer wg.mu.Unlock()
	return len(wg.unheld)
}

// AssumeAllSeen makes R26 take every acquisition as seen, whatever the
// test process did before (mode switches, copies, dropped holds, which
// it forgets), until t ends: as in a process that has been in check mode
// from its start.
func AssumeAllSeen(t testing.TB) {
	held.ForgetDropped()
	eng.copied.Store(false)
	eng.mu.Lock()
	eng.assumeSeen = true
	eng.mu.Unlock()
	t.Cleanup(func() {
		eng.mu.Lock()
		eng.assumeSeen = false
		eng.mu.Unlock()
	})
}
