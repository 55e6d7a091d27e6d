//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncwatch/syncwatch/lockorder"
)

// Two code paths take the same two locks in opposite orders. They never run
// at the same time, so nothing deadlocks, but the second order is reported
// the first time it runs.
func Example() {
	lockorder.Reset()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(v lockorder.Violation) {
		fmt.Println(v.Kind+":", v.Message)
	}))
	defer lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))

	workers := lockorder.NewMutex("worker_lock")
	aggregation := lockorder.NewMutex("aggregation_lock")

	submit := func() {
		workers.Lock()
		aggregation.Lock()
		aggregation.Unlock()
		workers.Unlock()
	}
	reduce := func() {
		aggregation.Lock()
		workers.Lock()
		workers.Unlock()
		aggregation.Unlock()
	}
	submit()
	reduce()
	// Output:
	// lock-order-cycle: cycle of 2 locks: aggregation_lock -> worker_lock -> aggregation_lock
}

// LockContext bounds a wait. The error matches both ErrWaitAbandoned and
// the context's error.
func ExampleMutex_LockContext() {
	lockorder.Reset()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
	mu := lockorder.NewMutex("table")
	locked, release := make(chan struct{}), make(chan struct{})
	go func() {
		mu.Lock()
		close(locked)
		<-release
		mu.Unlock()
	}()
	<-locked

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := mu.LockContext(ctx)
	fmt.Println(errors.Is(err, context.DeadlineExceeded), errors.Is(err, lockorder.ErrWaitAbandoned))
	fmt.Println(lockorder.Violations()[0].Kind)
	close(release)
	// Output:
	// true true
	// wait-timeout
}

// AssertHeld documents and checks a function's locking contract.
func ExampleMutex_AssertHeld() {
	lockorder.Reset()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(v lockorder.Violation) {
		fmt.Println(v.Kind)
	}))
	defer lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))

	var mu lockorder.Mutex
	version := 0
	bump := func() {
		mu.AssertHeld()
		version++
	}
	mu.Lock()
	bump()
	mu.Unlock()
	bump() // the unlocked update
	// Output:
	// not-held
}

// Locks made with the same class name share ordering rules, so an
// inversion between different instances is still found.
func ExampleNewMutex() {
	lockorder.Reset()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(v lockorder.Violation) {
		fmt.Println(v.Message)
	}))
	defer lockorder.Configure(lockorder.WithHandler(func(lockorder.Violation) {}))

	store1, replica1 := lockorder.NewMutex("store"), lockorder.NewMutex("replica")
	store2, replica2 := lockorder.NewMutex("store"), lockorder.NewMutex("replica")
	store1.Lock()
	replica1.Lock()
	replica1.Unlock()
	store1.Unlock()

	replica2.Lock()
	store2.Lock()
	store2.Unlock()
	replica2.Unlock()
	// Output:
	// cycle of 2 locks: replica -> store -> replica
}
