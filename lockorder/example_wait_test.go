//go:build !syncwatch_off

package lockorder_test

import (
	"fmt"
	"strings"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Once runs its function once; a Do called while holding a lock that the
// function takes is a lock-order cycle, reported although the calls never
// overlapped.
func ExampleOnce() {
	lockorder.Reset()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(v lockorder.Violation) { fmt.Println(v.Kind) }))
	defer lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))

	registry := lockorder.NewMutex("registry")
	var once lockorder.Once
	load := func() {
		registry.Lock() // the function takes registry
		registry.Unlock()
	}
	done := make(chan struct{})
	go func() { // another goroutine loads
		defer close(done)
		once.Do(load)
	}()
	<-done
	fmt.Println("loaded")

	registry.Lock()
	once.Do(load) // Do under registry: had it run while load ran, each would wait for the other
	registry.Unlock()
	// Output:
	// loaded
	// lock-order-cycle
}

// WaitGroup.Go starts a goroutine the group waits for. Waiting while
// holding a lock that such a goroutine takes is a cycle: here it deadlocks
// for real, and the deadlock is reported once it has lasted the grace
// period; the example then breaks it (any goroutine may unlock a Mutex).
func ExampleWaitGroup() {
	lockorder.Reset()
	reported := make(chan lockorder.Violation, 4)
	lockorder.Configure(
		lockorder.WithMode(lockorder.ModeCheck),
		lockorder.WithDeadlockAction(lockorder.DeadlockReport),
		lockorder.WithHandler(func(v lockorder.Violation) { reported <- v }),
	)
	defer lockorder.Configure(lockorder.WithDeadlockAction(lockorder.DeadlockPanic), lockorder.WithHandler(func(lockorder.Violation) {}))

	results := lockorder.NewMutex("results")
	var wg lockorder.WaitGroup
	results.Lock()
	wg.Go(func() {
		results.Lock() // waits for the goroutine below, which waits for us
		results.Unlock()
	})
	go func() {
		for v := range reported {
			if v.Kind == lockorder.KindDeadlock {
				// The WaitGroup is named after the code that first used
				// it: "WaitGroup lockorder_test.ExampleWaitGroup
				// (example_wait_test.go:55)#1".
				fmt.Println(v.Kind+":", strings.Contains(v.Message, "waits for WaitGroup lockorder_test.ExampleWaitGroup (example_wait_test.go:"),
					strings.Contains(v.Message, "lock results#"))
				results.Unlock() // break the cycle
				return
			}
		}
	}()
	wg.Wait()
	fmt.Println("done")
	// Output:
	// deadlock: true true
	// done
}

// Cond is sync.Cond: L is held while the condition is checked, and Wait is
// called in a loop.
func ExampleCond() {
	var mu lockorder.Mutex
	ready := lockorder.NewCond(&mu)
	queue := []string{}
	go func() {
		mu.Lock()
		queue = append(queue, "job")
		mu.Unlock()
		ready.Signal()
	}()
	mu.Lock()
	for len(queue) == 0 {
		ready.Wait()
	}
	fmt.Println(queue[0])
	mu.Unlock()
	// Output: job
}
