package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
	etcdbarrier "github.com/syncwatch/syncwatch/barrier/etcd"
	"github.com/syncwatch/syncwatch/barrier/etcd/embedded"
)

// Two ranks meet at a barrier in etcd, here an embedded one; each would
// run in a process of its own, with a client of its own. Then rank 1
// calls a different collective than rank 0, and the generation breaks at
// once for both.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	srv, err := embedded.Start(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	ops := [][]string{{"model.all_sum", "model.all_sum"}, {"model.all_sum", "bus.all_sum"}}
	var wg sync.WaitGroup
	out := make([]string, 2)
	for rank := range 2 {
		wg.Go(func() {
			cli, err := clientv3.New(clientv3.Config{Endpoints: srv.Endpoints(), DialTimeout: 5 * time.Second})
			if err != nil {
				out[rank] = err.Error()
				return
			}
			defer cli.Close()
			b := etcdbarrier.NewBarrier(cli, "/jobs/example/allreduce", 2, etcdbarrier.WithTimeout(time.Minute))
			defer b.Close()
			if err := b.Join(context.Background(), rank); err != nil {
				out[rank] = err.Error()
				return
			}
			for step := range 2 {
				gen, err := b.Await(context.Background(), rank, barrier.Op(ops[rank][step]))
				switch {
				case err == nil:
					out[rank] += fmt.Sprintf("generation %d completed; ", gen)
				case errors.Is(err, barrier.ErrCollectiveMismatch):
					out[rank] += fmt.Sprintf("generation %d: collective mismatch", gen)
				default:
					out[rank] += err.Error()
				}
			}
		})
	}
	wg.Wait()
	fmt.Println("rank 0:", out[0])
	fmt.Println("rank 1:", out[1])
	// Output:
	// rank 0: generation 0 completed; generation 1: collective mismatch
	// rank 1: generation 0 completed; generation 1: collective mismatch
}

// A Clock keeps workers in many processes within maxSkew iterations of
// each other. (Without output: it needs an etcd at the endpoint.)
func ExampleClock() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		return
	}
	defer cli.Close()
	const worker = 3
	c := etcdbarrier.NewClock(cli, "/jobs/train-42/clock", 32, 2, etcdbarrier.WithTimeout(5*time.Minute))
	defer c.Close()
	if err := c.Join(context.Background(), worker); err != nil {
		return
	}
	for range 100 {
		// ... compute an iteration ...
		if _, err := c.Advance(context.Background(), worker); err != nil {
			fmt.Println(err) // names the slow workers and why they are slow
			return
		}
	}
}
