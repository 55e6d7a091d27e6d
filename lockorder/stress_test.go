//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/syncwatch/syncwatch/internal/gls"
	"github.com/syncwatch/syncwatch/lockorder"
)

// A stress test (from the engine review): many goroutines, hand-offs, try locks, read locks, contexts, mode
// switches, and enough short-lived goroutines to force held-table sweeps.
func TestStressMixedOperations(t *testing.T) {
	fresh(t)
	var ms [6]*lockorder.Mutex
	var rws [4]*lockorder.RWMutex
	for i := range ms {
		ms[i] = lockorder.NewMutex("st")
	}
	for i := range rws {
		rws[i] = lockorder.NewRWMutex("srw")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// long-lived workers: canonical order by index
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a, b := ms[(w+i)%3], ms[3+(w+i)%3]
				a.Lock()
				if b.TryLock() {
					b.Unlock()
				}
				r := rws[i%4]
				r.RLock()
				r.RUnlock()
				ctx, c := context.WithTimeout(context.Background(), time.Microsecond)
				if b.LockContext(ctx) == nil {
					b.Unlock()
				}
				c()
				a.Unlock()
				if i%50 == 0 {
					// hand-off
					x := ms[(w+i)%3]
					x.Lock()
					done := make(chan struct{})
					go func() { x.Unlock(); close(done) }()
					<-done
				}
			}
		}()
	}
	// goroutine churn to force reclaims
	before, _, rc0, _ := gls.Stats()
	for batch := range 40 {
		var bw sync.WaitGroup
		for range 500 {
			bw.Add(1)
			go func() {
				defer bw.Done()
				var m lockorder.Mutex
				m.Lock()
				ms[batch%3].Lock()
				ms[batch%3].Unlock()
				m.Unlock()
			}()
		}
		bw.Wait()
		if batch%10 == 0 {
			lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
			lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck))
		}
	}
	close(stop)
	wg.Wait()
	c, o, rc, _ := gls.Stats()
	t.Logf("states %d->%d overflow %d reclaimed %d->%d", before, c, o, rc0, rc)
	for _, v := range lockorder.Violations() {
		// A 1µs LockContext may legitimately give up; nothing else may
		// be reported: every order in this test is consistent.
		if v.Kind != lockorder.KindWaitTimeout {
			t.Errorf("unexpected: %s", v.Message)
		}
	}
}
