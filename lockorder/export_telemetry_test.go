//go:build !syncwatch_off

package lockorder

import (
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/internal/goid"
	"github.com/syncwatch/syncwatch/internal/kind"
)

// MaxWaitProfileKeys is the bound of the wait profile's table.
const MaxWaitProfileKeys = maxWaitKeys

// WaitNoted notes a wait of the calling goroutine in the waiting profile, as
// a contended Lock does around its blocking call, and blocks until release
// is closed: beginWaitNote before blocking, endWaitNote after.
func WaitNoted(release <-chan struct{}) {
	gs := gls.Get(goid.ID())
	beginWaitNote(gs)
	<-release
	endWaitNote(gs)
}

// RecordWaits records in the wait profile one short wait of d for each of
// n new locks of class name.
func RecordWaits(name string, n int, d time.Duration) {
	for range n {
		recordWaitProfile(newLock(name, kind.Mutex, nil), d, false, 0)
	}
}

// RecordWaitsOn records n short waits of d on m's lock, as n contended
// Locks that ended would.
func RecordWaitsOn(m *Mutex, n int, d time.Duration) {
	for range n {
		recordWaitProfile(m.lock(), d, false, 0)
	}
}

// UnsetProviders leaves the configuration with no tracer or meter provider,
// as in a program that never set one, until the test ends.
func UnsetProviders(t testing.TB) {
	configMu.Lock()
	c := *cfg.Load()
	old := c
	c.tracerProvider, c.meterProvider = nil, nil
	cfg.Store(&c)
	configMu.Unlock()
	t.Cleanup(func() {
		configMu.Lock()
		c := *cfg.Load()
		c.tracerProvider, c.meterProvider = old.tracerProvider, old.meterProvider
		cfg.Store(&c)
		configMu.Unlock()
	})
}
