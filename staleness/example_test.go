package staleness_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/syncwatch/syncwatch/staleness"
)

// The staleness check of incident IR-2024-0319-001, done right: with a
// bound of 10, the gradients 15, 12 and 18 versions old are rejected, one
// exactly 10 old is accepted, and so is nothing 11 old (the incident's
// `staleness > max + 1` accepted it).
func ExamplePolicy_Check() {
	p := staleness.Policy{MaxStaleness: 10}
	const current = 142
	for _, s := range []uint64{15, 12, 18, 10, 11} {
		err := p.Check(current, current-s)
		var se *staleness.StaleError
		switch {
		case err == nil:
			fmt.Printf("staleness %d: applied\n", s)
		case errors.As(err, &se) && errors.Is(err, staleness.ErrTooStale):
			fmt.Printf("staleness %d: rejected (%s, bound %d)\n", se.Staleness, se.ErrorType(), se.Max)
		}
	}
	fmt.Println(errors.Is(p.Check(current, 143), staleness.ErrFutureVersion))
	// Output:
	// staleness 15: rejected (too-stale, bound 10)
	// staleness 12: rejected (too-stale, bound 10)
	// staleness 18: rejected (too-stale, bound 10)
	// staleness 10: applied
	// staleness 11: rejected (too-stale, bound 10)
	// true
}

// Two workers under stale synchronous parallel rules with a skew of 1:
// worker 0 may finish one iteration more than worker 1, but not two.
func ExampleClock() {
	c := staleness.NewClock(2, 1)
	ctx := context.Background()

	clk, _ := c.Advance(ctx, 0)
	fmt.Println("worker 0 starts iteration", clk)

	done := make(chan uint64)
	go func() {
		clk, _ := c.Advance(ctx, 0) // 2 ahead of worker 1: waits
		done <- clk
	}()

	clk, _ = c.Advance(ctx, 1) // worker 1 catches up and releases worker 0
	fmt.Println("worker 1 starts iteration", clk)
	fmt.Println("worker 0 starts iteration", <-done)
	fmt.Println("clocks", c.Clocks(), "min", c.Min())
	// Output:
	// worker 0 starts iteration 1
	// worker 1 starts iteration 1
	// worker 0 starts iteration 2
	// clocks [2 1] min 1
}

// A worker that finishes, or that a supervisor declares dead, leaves the
// clock so that it no longer holds the others back.
func ExampleClock_Leave() {
	c := staleness.NewClock(3, 0)
	ctx := context.Background()
	c.Leave(2) // worker 2 crashed before its first iteration

	done := make(chan uint64)
	go func() {
		clk, _ := c.Advance(ctx, 0)
		done <- clk
	}()
	clk, _ := c.Advance(ctx, 1)
	fmt.Println(clk, <-done)

	_, err := c.Advance(ctx, 2)
	fmt.Println(err)
	// Output:
	// 1 1
	// staleness: worker 2 has left the clock (at clock 0)
}
