//go:build !syncwatch_off

package lockorder_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

// cycleEdges returns the cycle reports, each as its edges.
func cycleEdges() []string {
	var out []string
	for _, v := range only(lockorder.KindCycle) {
		var s []string
		for _, e := range v.Cycle {
			s = append(s, e.From+"->"+e.To)
		}
		out = append(out, strings.Join(s, " "))
	}
	return out
}

func hasNode(cycles []string, node string) bool {
	for _, c := range cycles {
		if strings.Contains(c, node) {
			return true
		}
	}
	return false
}

// A goroutine's Wait under m alone (ungated), then at the same place under
// m and a.RLock (the m edge read-gated by a; a's read hold waits under
// R12, so it is no kept edge): one kept Wait, held back only by what held
// back both. The Go'd function takes a for writing, then m: the cycle
// group -> m -> group, which the first Wait closes for real (main holds m
// and waits for f; f holds a, wants m), is reported.
func TestAKeptWaitReplacedKeepsOnlyTheGatesOfBoth(t *testing.T) {
	fresh(t)
	m := lockorder.NewMutex("r22-m")
	a := lockorder.NewRWMutex("r22-a")
	var wg lockorder.WaitGroup
	run(func() {
		for i := range 2 {
			if i == 1 {
				a.RLock()
			}
			m.Lock()
			wg.Wait() // at zero; the same place both times
			m.Unlock()
			if i == 1 {
				a.RUnlock()
			}
		}
	})
	// Another goroutine, ordered after by nothing syncwatch sees.
	run(func() {
		wg.Go(func() {
			a.Lock()
			m.Lock()
			m.Unlock()
			a.Unlock()
		})
		wg.Wait()
	})
	cs := cycleEdges()
	t.Logf("cycles: %q", cs)
	found := false
	for _, c := range cs {
		if strings.Contains(c, "r22-m") && !strings.Contains(c, "r22-a") {
			found = true
		}
	}
	assert.True(t, found, "group -> r22-m -> group (the first Wait, under m alone) is a real cycle")
}

// A fresh group per request, waited under a lock, is no graph node (R22):
// its class is written from the start, so its first Wait opens no writers'
// gate either.
func TestAFreshGroupWaitedUnderALockIsNoNode(t *testing.T) {
	fresh(t)
	mu := lockorder.NewMutex("r22-req")
	run(func() {
		for range 50 {
			var wg lockorder.WaitGroup
			mu.Lock()
			wg.Wait()
			mu.Unlock()
		}
	})
	nodes, edges := lockorder.GraphSize()
	t.Logf("nodes %d edges %d", nodes, edges)
	assert.Less(t, nodes, 10, "a node per fresh group")
}
