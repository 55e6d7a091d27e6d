// Command incident replays the lock-order bug behind the training-cluster
// hang of incident IR-2024-0319-001: the all-reduce coordinator's
// submit_gradients path takes the worker lock then the aggregation lock,
// and get_reduced_gradients takes them in the opposite order.
//
// In production the two paths ran for months before they overlapped and
// deadlocked 32 workers for four hours. Here lockorder, in check mode,
// reports the cycle the first time the second order runs, with both
// stacks, and the program never blocks.
//
//	go run ./examples/incident
package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/syncwatch/syncwatch/lockorder"
)

// coordinator is the incident's AllReduceCoordinator.
type coordinator struct {
	workerLock      *lockorder.Mutex
	aggregationLock *lockorder.Mutex
	pending         map[int][]float32
	reduced         []float32
}

func newCoordinator() *coordinator {
	return &coordinator{
		workerLock:      lockorder.NewMutex("worker_lock"),
		aggregationLock: lockorder.NewMutex("aggregation_lock"),
		pending:         map[int][]float32{},
	}
}

// submitGradients: worker lock, then aggregation lock.
func (c *coordinator) submitGradients(worker int, grad []float32) {
	c.workerLock.Lock()
	defer c.workerLock.Unlock()
	c.pending[worker] = grad
	c.aggregationLock.Lock()
	defer c.aggregationLock.Unlock()
	if c.reduced == nil {
		c.reduced = make([]float32, len(grad))
	}
	for i, g := range grad {
		c.reduced[i] += g
	}
}

// getReducedGradients: aggregation lock, then worker lock — the inversion.
func (c *coordinator) getReducedGradients() []float32 {
	c.aggregationLock.Lock()
	defer c.aggregationLock.Unlock()
	c.workerLock.Lock()
	defer c.workerLock.Unlock()
	out := make([]float32, len(c.reduced))
	for i, g := range c.reduced {
		out[i] = g / float32(max(1, len(c.pending)))
	}
	return out
}

func main() {
	var mu sync.Mutex
	var found []lockorder.Violation
	lockorder.Configure(
		lockorder.WithMode(lockorder.ModeCheck),
		lockorder.WithHandler(func(v lockorder.Violation) {
			mu.Lock()
			found = append(found, v)
			mu.Unlock()
			fmt.Println(v)
		}),
	)

	c := newCoordinator()
	fmt.Println("phase 1: worker 12 submits gradients (worker_lock -> aggregation_lock)")
	done := make(chan struct{})
	go func() { defer close(done); c.submitGradients(12, []float32{0.5, -0.25}) }()
	<-done

	fmt.Println("phase 2: worker 18 reads the reduced gradients (aggregation_lock -> worker_lock)")
	fmt.Println("         the two paths never overlap in time, so nothing deadlocks yet...")
	done = make(chan struct{})
	go func() { defer close(done); fmt.Println("reduced:", c.getReducedGradients()) }()
	<-done

	mu.Lock()
	defer mu.Unlock()
	for _, v := range found {
		if v.Kind == lockorder.KindCycle {
			fmt.Printf("caught: %s, before any deadlock\n", v.Message)
			return
		}
	}
	fmt.Println("the lock-order cycle was not reported")
	os.Exit(1)
}
