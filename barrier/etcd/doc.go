// Package etcd is syncwatch's barrier and SSP clock across processes, on
// etcd v3: [Barrier] keeps the contract of barrier.Barrier, and [Clock]
// that of staleness.Clock, for ranks in many processes on many machines,
// with the official client (go.etcd.io/etcd/client/v3). It is a nested
// module, so that users of syncwatch's core never download etcd.
//
//	cli, _ := clientv3.New(clientv3.Config{Endpoints: endpoints})
//	b := etcd.NewBarrier(cli, "/jobs/train-42/allreduce", 32, etcd.WithTimeout(2*time.Minute))
//	defer b.Close()
//	if err := b.Join(ctx, rank); err != nil { ... }
//	for step := 0; ; step++ {
//		if _, err := b.Await(ctx, rank, barrier.Op("model.all_sum")); err != nil {
//			var be *barrier.BrokenError
//			if errors.As(err, &be) {
//				log.Print(be.Report()) // who is missing and why, from their processes
//			}
//		}
//	}
//
// etcd's own recipes (client/v3/experimental/recipes Barrier and
// DoubleBarrier) have no timeout: a missing participant blocks everyone
// forever. Here no wait is unbounded.
//
// # Generations, decided once
//
// A generation is a key, P/g/GEN, created pending by its first arrival.
// Each rank arrives with one transaction that, if the rank still holds its
// lease, opens the generation or joins it while it is pending, puts the
// rank's arrival key (attached to its lease) and counts the arrivals. The
// last rank to arrive decides the generation done; a rank whose wait ends
// first (its timeout, its context, a rank gone, a collective mismatch)
// decides it broken, with who is missing and why. Deciding is one
// transaction that compares the generation key's version with 1 (still
// pending) and writes the verdict: whoever comes first decides, for every
// rank in every process, and everyone else's transaction reads that
// verdict instead. So a generation is decided exactly once, a completion
// that reached etcd first is never turned into a break, and every rank
// returns the same *barrier.BrokenError (or nil). A rank's next Await is
// for the next generation only once it has its generation's verdict:
// generations never cross. Waiters learn the verdict from a watch on the
// generation's key, in revision order.
//
// Every Await is bounded by its context and by the barrier's timeout
// ([WithTimeout]), counted from its arrival; deciding then takes at most
// [WithDecideTimeout]. If etcd cannot be reached in that time, the Await
// returns a *[UnavailableError]: not a verdict, and not a different one,
// but "unknown"; the rank stays on its generation, and its next Await
// returns the verdict. The decide transaction also deletes the generation
// that falls out of the history ([WithHistory]), so the keys of a
// barrier stay bounded however long it runs.
//
// # Settings every rank shares
//
// Every process of a barrier must say the same party count: a process
// that said fewer would see a generation complete while the others still
// wait for its missing ranks. The first Join under a prefix records the
// barrier's [Settings] (kind, party count, history; for a clock, its
// worker count and maxSkew) in one transaction that creates P/settings
// if no one did; every later Join, in any process, compares its own with
// that record, and its joining transaction checks that the record is
// still the one it compared with. A Join that disagrees returns a
// *[SettingsMismatchError] (matching [ErrSettingsMismatch]) naming each
// setting that differs and who recorded it, and takes nothing: the ranks
// that agree go on as if it had not tried. The timeout, lease TTL,
// decide timeout and name are each process's own and are not compared.
// The record goes with the barrier's other keys when its last rank
// closes.
//
// # Leases
//
// Each rank holds a lease ([WithLeaseTTL]) that its process keeps alive,
// and its key P/c/m/RANK and its arrivals are attached to it. When the
// process dies, or is cut off from etcd for longer than the TTL, etcd
// deletes them; every process watches P/c/ and sees the deletion, and a
// pending generation breaks at once, naming the rank and the time its
// lease expired, instead of waiting for its timeout. A rank that closes
// its handle says so first, so that it is reported as having left, not
// died. [Barrier.Close] revokes the leases, and the last rank to close
// deletes every key under the prefix.
//
// # Why, across processes
//
// At a break, Why says, for each missing rank, one of:
//
//	rank 5: lease expired at 14:02:11.412 (3.1s ago): the process died or is cut off from etcd
//	rank 2: alive (lease renewed 310ms before it answered, 1.5s ago; pid 4242 on host-b), blocked in a syncwatch wait: waiting for lock aggregation_lock#1, held by goroutine 28 (rank 3), which is waiting for barrier allreduce (rank 3, generation 7)
//	rank 6: alive (lease renewed 120ms before it answered, 1.4s ago; pid 4250 on host-c), not in a syncwatch wait (goroutine 40 is blocked in chan receive at main.load (load.go:31)), last seen at generation 6
//
// The lease is live at the break: the rank's key is still there.
//
// A process can only see its own goroutines, so each one says what its
// own ranks are doing. Halfway through a waiter's bound, and shortly
// before it, the waiter asks (a compare-guarded put of P/c/ask, once per
// round across all processes); every process's watch sees the ask, and
// for each of its ranks missing from the generation it explains the
// goroutine of the rank's latest Await with syncwatch's wait-for graph
// (barrier.ExplainGoroutine) and puts the answer into the rank's key. The
// break reads the answers from its own view. Asking is bounded: at most
// two rounds per generation, one put per missing rank per round, and one
// ask handled at a time per process. An Await registers its wait in the
// wait-for graph (barrier.BeginExternalWait), which is how a lock wait
// in the same process is explained as "held by goroutine 28 (rank 3),
// which is waiting for barrier allreduce".
//
// A rank that never arrived is explained by its joiner's goroutine, which
// may not be the one that is stuck. So its process also names, from its
// wait-for graph (barrier.ExplainBlockedOnWaiters), the goroutines blocked on a
// lock held by one of its ranks waiting at this barrier: "never arrived;
// goroutine 42, of no known rank, is blocked on lock agg#1, held by
// goroutine 28 (rank 0), which is waiting at this barrier". Lock holders
// are known in lockorder's ModeCheck only.
//
// # Collective fingerprints
//
// barrier.Op labels an Await with its collective. The first labelled
// arrival sets the generation's label (P/g/GEN/op, created once); an
// arrival with another label breaks the generation at once with a
// *barrier.MismatchError as its cause (barrier.ErrCollectiveMismatch),
// naming which ranks are at which operation and each rank's count of
// collectives so far, per label, as carried by its arrival. Breaks are
// reported, once per generation in each process that takes part, through
// lockorder's pipeline as barrier.KindBroken or
// barrier.KindCollectiveMismatch violations.
//
// # Clocks
//
// A [Clock] keeps each worker's SSP clock in its key; every process
// watches the keys and lets its worker go on when its clock minus the
// smallest clock of the workers that have not left is at most maxSkew.
// Clocks only grow, so a view that lags only makes a worker wait longer.
// A worker waited for whose lease expired can never catch up: the wait
// ends at once with a *[ClockWaitError] matching [ErrLeaseExpired]; on a
// timeout it matches staleness.ErrWaitTimeout. Both say why each slow
// worker is slow, as the barrier does.
//
// # Where etcd runs
//
// Tests, examples and the demo (examples/cluster) run an embedded etcd
// (package [github.com/syncwatch/syncwatch/barrier/etcd/embedded]) on
// loopback ports, with its data in a temporary directory: nothing to
// install. Against a real cluster, give [NewBarrier] and [NewClock] a
// client of it (clientv3.New with its endpoints). A client should retry
// a lost connection quickly (embedded.DialOptions), so that it reconnects
// within a lease's TTL after an etcd restart.
//
// # Cost
//
// An Await is one transaction to arrive and, for the last rank, one to
// decide; a waiter also opens a watch on its generation's key. Every
// process keeps one watch on P/c/ (membership and asks), whose events
// are a rank joining, leaving or answering: nothing per generation when
// no one is missing. A break reads the generation's arrival keys once.
package etcd
