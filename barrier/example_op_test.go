package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/syncwatch/syncwatch/barrier"
)

// Two ranks label their Awaits with the collective they are part of. When
// rank 1 goes on to the control bus's all-reduce while rank 0 is still in
// the model's, the generation breaks at once and says who is where.
func ExampleOp() {
	b := barrier.New(2, barrier.WithName("tp"))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	ops := []string{"model.all_sum", "bus.all_sum"}
	for rank := range 2 {
		wg.Go(func() {
			_, errs[rank] = b.Await(context.Background(), rank, barrier.Op(ops[rank]))
		})
	}
	wg.Wait()
	var me *barrier.MismatchError
	if errors.As(errs[0], &me) {
		fmt.Println("mismatch:", errors.Is(errs[0], barrier.ErrCollectiveMismatch))
		for _, o := range me.Ops {
			fmt.Printf("ranks %v at %s\n", o.Ranks, o.Op)
		}
	}
	// Unordered output:
	// mismatch: true
	// ranks [0] at model.all_sum
	// ranks [1] at bus.all_sum
}
