package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/syncwatch/syncwatch/barrier"
	etcdbarrier "github.com/syncwatch/syncwatch/barrier/etcd"
	"github.com/syncwatch/syncwatch/barrier/etcd/embedded"
	"github.com/syncwatch/syncwatch/lockorder"
)

// A child is one of the 8 processes: it runs ranks 2*proc and 2*proc+1,
// one goroutine each, through the three cases in order, and prints one
// line of JSON per rank and case on standard output for the parent.

// result is what a rank tells the parent about one case.
type result struct {
	Case     string                 `json:"case"`
	Rank     int                    `json:"rank"`
	PID      int                    `json:"pid"`
	Gen      uint64                 `json:"gen"`
	Err      string                 `json:"err,omitempty"`
	Report   string                 `json:"report,omitempty"`
	Missing  []int                  `json:"missing,omitempty"`
	Why      []barrier.MissingRank  `json:"why,omitempty"`
	Mismatch bool                   `json:"mismatch,omitempty"`
	Ops      *barrier.MismatchError `json:"ops,omitempty"`
	Lease    bool                   `json:"lease,omitempty"` // the cause matches ErrLeaseExpired
	At       time.Time              `json:"at"`
}

// event is a line a child prints to say where it is: "ready", or the
// victim's "hanging" in case (b).
type event struct {
	Event string `json:"event"`
	Rank  int    `json:"rank"`
}

var out = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

func emit(v any) {
	out.Lock()
	defer out.Unlock()
	out.enc.Encode(v) //nolint:errcheck // the parent notices a missing line
}

func runChild(proc int, endpoints []string, run string) error {
	// The lock case needs lock holders tracked: lockorder's check mode.
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, DialOptions: embedded.DialOptions()})
	if err != nil {
		return err
	}
	defer cli.Close()
	ranks := []int{2 * proc, 2*proc + 1}
	handles := map[string]*etcdbarrier.Barrier{}
	for _, c := range cases {
		b := etcdbarrier.NewBarrier(cli, prefixOf(run, c.name), parties,
			etcdbarrier.WithName(c.barrier), etcdbarrier.WithTimeout(c.timeout), etcdbarrier.WithLeaseTTL(leaseTTL))
		for _, r := range ranks {
			if err := b.Join(context.Background(), r); err != nil {
				return err
			}
		}
		handles[c.name] = b
	}
	emit(event{Event: "ready", Rank: ranks[0]})
	agg := lockorder.NewMutex("aggregation_lock")
	locked := make(chan struct{})
	var wg sync.WaitGroup
	for _, r := range ranks {
		wg.Go(func() {
			rankMain(r, handles, agg, locked)
		})
	}
	wg.Wait()
	var errs []error
	for _, b := range handles {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}

// rankMain is one rank's program: the three cases, in order.
func rankMain(r int, handles map[string]*etcdbarrier.Barrier, agg *lockorder.Mutex, locked chan struct{}) {
	ctx := context.Background()

	// (a) Generation 0 completes. In generation 1, rank 7 takes
	// aggregation_lock and waits at the barrier holding it; rank 6, in
	// the same process, needs the lock before it can arrive.
	b := handles["lock"]
	warm(ctx, b, r, "lock")
	switch r {
	case lockHolder:
		agg.Lock()
		close(locked)
		report("lock", r)(b.Await(ctx, r))
		agg.Unlock()
	case lockWaiter:
		<-locked
		agg.Lock()
		agg.Unlock() //nolint:staticcheck // the wait is the point
		report("lock", r)(b.Await(ctx, r))
	default:
		report("lock", r)(b.Await(ctx, r))
	}

	// (c) Two all-reduces of the model; then rank 5 goes on to the
	// control bus's while the others run the model's a third time.
	b = handles["collective"]
	for step := range 3 {
		op := "model.all_sum"
		if step == 2 && r == busRank {
			op = "bus.all_sum"
		}
		gen, err := b.Await(ctx, r, barrier.Op(op))
		if step == 2 {
			report("collective", r)(gen, err)
		}
	}

	// (b) Generation 0 completes; in generation 1 the victim's process
	// hangs, and the parent kills it with SIGKILL.
	b = handles["kill"]
	warm(ctx, b, r, "kill")
	if r/2 == victimProc {
		emit(event{Event: "hanging", Rank: r})
		time.Sleep(time.Minute) // killed long before
		os.Exit(3)
	}
	report("kill", r)(b.Await(ctx, r))
}

// warm runs generation 0 of a case's barrier.
func warm(ctx context.Context, b *etcdbarrier.Barrier, r int, name string) {
	if _, err := b.Await(ctx, r); err != nil {
		emit(result{Case: name + "/warm-up", Rank: r, PID: os.Getpid(), Err: err.Error(), At: time.Now()})
	}
}

// report returns a function that sends what an Await returned.
func report(name string, r int) func(uint64, error) {
	return func(gen uint64, err error) {
		res := result{Case: name, Rank: r, PID: os.Getpid(), Gen: gen, At: time.Now()}
		if err != nil {
			res.Err = err.Error()
			res.Mismatch = errors.Is(err, barrier.ErrCollectiveMismatch)
			res.Lease = errors.Is(err, etcdbarrier.ErrLeaseExpired)
			errors.As(err, &res.Ops)
			var be *barrier.BrokenError
			if errors.As(err, &be) {
				res.Missing, res.Why, res.Report = be.Missing, be.Why, be.Report()
			}
		}
		emit(res)
	}
}

func prefixOf(run, name string) string { return "/syncwatch/cluster/" + run + "/" + name + "/" }

// short trims a text for the summary.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:n]) + " [...]"
}
