//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// R23 past its bound (held.MaxProving edges waiting on one goroutine):
// handles that their goroutine locks for good when it closes them (a
// closed file's lock, by design), one anonymous lock each, with the
// goroutine going on under them: it takes the registry, a short section
// released at once, thousands of edges' worth. Those edges wait for the
// handles' release, which never comes; pushed out past the bound they
// were added as though proved (a nesting's would be), and closed a cycle
// with "registry, then handle" (CloseAll): a false report, since no
// goroutine but the keeper ever locks a closed handle. A section released
// under the holds is no nesting: its edges are dropped.
func TestSectionsUnderHandlesKeptForGoodPastTheBoundCloseNoCycle(t *testing.T) {
	fresh(t)
	type handle struct {
		mu   lockorder.Mutex
		data int
	}
	var reg struct {
		mu lockorder.Mutex
		hs []*handle
	}
	open := func() *handle {
		h := new(handle)
		reg.mu.Lock()
		reg.hs = append(reg.hs, h)
		reg.mu.Unlock()
		h.mu.Lock() // used
		h.data++
		h.mu.Unlock()
		return h
	}
	closeAll := func() {
		reg.mu.Lock()
		for _, h := range reg.hs {
			h.mu.Lock() // closed: locked for good
		}
		reg.hs = nil
		reg.mu.Unlock()
	}
	run(func() {
		for range 3 {
			for range 60 {
				open()
			}
			closeAll()
			open() // under every handle closed so far
		}
	})
	assert.Empty(t, only(lockorder.KindCycle), "no goroutine but the keeper locks a closed handle")
}
