//go:build !syncwatch_off

package lockorder

import "testing"

// KeptWaits returns how many Waits wg keeps for its first Go (R22).
func keptWaits(wg *WaitGroup) int {
	wg.mu.Lock()
	defer wg.mu.Unlock()
	return len(wg.unheld)
}

// One goroutine's Waits at one place under the same holds, on a group no
// Go'd function has held yet, are one kept Wait (unheldWait.same): the
// newer replaces the older. The first of them made the group's identity.
func TestKeptWaitsOfOnePlaceAreOne(t *testing.T) {
	Configure(WithMode(ModeCheck), WithHandler(func(Violation) {}))
	Reset()
	t.Cleanup(Reset)
	mu := NewMutex("kept-waits-mu")
	var wg WaitGroup
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			mu.Lock()
			wg.Wait() // the same line each time
			mu.Unlock()
		}
	}()
	<-done
	if n := keptWaits(&wg); n != 1 {
		t.Fatalf("the group keeps %d Waits of one goroutine at one place under one lock, want 1", n)
	}
}

// A group keeps up to maxUnheldWaits Waits, one per goroutine, place and
// holds, before any Go: none adds an edge (R22: a Wait on a group never
// Go'd makes no node). Here maxUnheldWaits goroutines wait at one place
// under one lock, the first twice (it makes the group's identity): that
// is maxUnheldWaits Waits to keep, and the graph gets no edge.
func TestKeptWaitsFillNoSlotTwice(t *testing.T) {
	Configure(WithMode(ModeCheck), WithHandler(func(Violation) {}))
	Reset()
	t.Cleanup(Reset)
	mu := NewMutex("kept-waits-mu")
	var wg WaitGroup
	wait := func(times int) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range times {
				mu.Lock()
				wg.Wait() // the same line each time
				mu.Unlock()
			}
		}()
		<-done
	}
	wait(2)
	for range maxUnheldWaits - 1 {
		wait(1)
	}
	if _, edges := GraphSize(); edges != 0 {
		t.Fatalf("%d edges in the graph before the group's first Go (it keeps %d Waits)", edges, keptWaits(&wg))
	}
}
