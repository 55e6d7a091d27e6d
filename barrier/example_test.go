package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/syncwatch/syncwatch/barrier"
)

// Three workers run two bulk-synchronous steps. The action runs once per
// generation, in the last worker to arrive, before any is released.
func Example() {
	const workers = 3
	b := barrier.New(workers, barrier.WithName("steps"), barrier.WithAction(func(gen uint64) error {
		fmt.Printf("generation %d: all %d workers arrived\n", gen, workers)
		return nil
	}))
	var wg sync.WaitGroup
	for rank := range workers {
		wg.Go(func() {
			for range 2 {
				// ... compute this step's share ...
				if _, err := b.Await(context.Background(), rank); err != nil {
					fmt.Println(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Output:
	// generation 0: all 3 workers arrived
	// generation 1: all 3 workers arrived
}

// A rank that never arrives breaks the generation for everyone once the
// bound passes, and the error names it and says what it is doing.
func ExampleBrokenError() {
	b := barrier.New(3, barrier.WithName("allreduce"), barrier.WithTimeout(50*time.Millisecond))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for rank := range 2 { // rank 2 never comes
		wg.Go(func() { _, errs[rank] = b.Await(context.Background(), rank) })
	}
	wg.Wait()

	var be *barrier.BrokenError
	if errors.As(errs[0], &be) {
		fmt.Println("same error for both:", errs[0] == errs[1])
		fmt.Println("timed out:", errors.Is(be, context.DeadlineExceeded))
		fmt.Printf("generation %d, missing %v\n", be.Generation, be.Missing)
		for _, m := range be.Why {
			fmt.Println(m)
		}
	}
	// Output:
	// same error for both: true
	// timed out: true
	// generation 0, missing [2]
	// rank 2: never arrived at this barrier
}

// A worker that dies leaves the barrier; the others go on without it.
func ExampleBarrier_Leave() {
	b := barrier.New(3, barrier.WithName("workers"))
	var wg sync.WaitGroup
	for rank := range 2 {
		wg.Go(func() {
			gen, err := b.Await(context.Background(), rank)
			if err == nil && rank == 0 {
				fmt.Printf("generation %d completed without rank 2\n", gen)
			}
		})
	}
	b.Leave(2, errors.New("worker 2 died"))
	wg.Wait()
	_, err := b.Await(context.Background(), 2)
	fmt.Println(err)
	fmt.Println(errors.Is(err, barrier.ErrLeft))
	// Output:
	// generation 0 completed without rank 2
	// barrier: rank has left: workers rank 2: worker 2 died
	// true
}

// Abort breaks the current generation for every rank, on purpose.
func ExampleBarrier_Abort() {
	b := barrier.New(2)
	b.Abort(errors.New("checkpoint failed"))
	for rank := range 2 {
		gen, err := b.Await(context.Background(), rank)
		fmt.Println(gen, errors.Is(err, barrier.ErrAborted))
	}
	// Output:
	// 0 true
	// 0 true
}

// The flight recorder remembers who arrived last in each generation.
func ExampleBarrier_History() {
	b := barrier.New(2)
	var wg sync.WaitGroup
	wg.Go(func() { b.Await(context.Background(), 0) })
	for { // let rank 0 arrive first
		if _, arrived := b.Current(); len(arrived) == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.Await(context.Background(), 1)
	wg.Wait()
	for _, rec := range b.History() {
		fmt.Printf("generation %d: arrivals %d, straggler rank %d\n", rec.Generation, len(rec.Arrivals), rec.Straggler)
	}
	// Output:
	// generation 0: arrivals 2, straggler rank 1
}
