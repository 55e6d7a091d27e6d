package paramserver_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/syncwatch/syncwatch/paramserver"
	"github.com/syncwatch/syncwatch/staleness"
)

// Two workers read the parameters, compute gradients and apply them under
// a staleness bound of 1. The incident's server applied stale gradients
// with a warning; this one rejects them and changes nothing.
func ExampleServer() {
	ps, err := paramserver.New(paramserver.Params{"w": {1, 1}},
		paramserver.WithWorkers(2), paramserver.WithMaxStaleness(1), paramserver.WithLearningRate(0.5))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	old := ps.Get(1) // worker 1 reads version 0 and is slow
	for range 2 {
		snap := ps.Get(0)
		v, _ := ps.Apply(ctx, 0, paramserver.Params{"w": {0.5, -0.5}}, snap.Version)
		fmt.Println("worker 0 made version", v)
	}

	_, err = ps.Apply(ctx, 1, paramserver.Params{"w": {1, 1}}, old.Version)
	var se *staleness.StaleError
	if errors.As(err, &se) && errors.Is(err, staleness.ErrTooStale) {
		fmt.Printf("worker 1 rejected: staleness %d, bound %d\n", se.Staleness, se.Max)
	}
	snap := ps.Get(1)
	fmt.Println("version", snap.Version, "w", snap.Params["w"], "old snapshot still", old.Params["w"])
	st := ps.Stats()
	fmt.Println("accepted", st.Total().Accepted, "rejected", st.Total().Rejected())
	// Output:
	// worker 0 made version 1
	// worker 0 made version 2
	// worker 1 rejected: staleness 2, bound 1
	// version 2 w [0.5 1.5] old snapshot still [1 1]
	// accepted 2 rejected 1
}

// Watch delivers every version in order, the way an etcd watcher receives
// every revision.
func ExampleServer_Watch() {
	ps, _ := paramserver.New(paramserver.Params{"w": {0}}, paramserver.WithLearningRate(1))
	ctx := context.Background()
	for range 3 {
		_, _ = ps.Apply(ctx, 0, paramserver.Params{"w": {-1}}, ps.Version())
	}
	for snap, err := range ps.Watch(ctx, 1) {
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println("version", snap.Version, "w", snap.Params["w"])
		if snap.Version == 3 {
			break
		}
	}
	// Output:
	// version 1 w [1]
	// version 2 w [2]
	// version 3 w [3]
}

// With aggregation the server is synchronous: k gradients on the current
// version are averaged into one version, and one arriving late is rejected
// and counted rather than silently dropped.
func ExampleWithAggregation() {
	ps, _ := paramserver.New(paramserver.Params{"w": {0}},
		paramserver.WithAggregation(2), paramserver.WithWorkers(3), paramserver.WithLearningRate(1))
	ctx := context.Background()

	v, _ := ps.Apply(ctx, 0, paramserver.Params{"w": {-2}}, 0)
	fmt.Println("worker 0 joins the round for version", v, "- now at", ps.Version())
	v, _ = ps.Apply(ctx, 1, paramserver.Params{"w": {-4}}, 0)
	snap, _ := ps.WaitVersion(ctx, v)
	fmt.Println("worker 1 completes it: version", snap.Version, "w", snap.Params["w"])

	_, err := ps.Apply(ctx, 2, paramserver.Params{"w": {-100}}, 0)
	fmt.Println("worker 2 too late:", errors.Is(err, staleness.ErrTooStale), "- counted:", ps.Stats().Workers[2].TooStale)
	// Output:
	// worker 0 joins the round for version 1 - now at 0
	// worker 1 completes it: version 1 w [3]
	// worker 2 too late: true - counted: 1
}
