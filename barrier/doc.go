// Package barrier is a reusable, bounded barrier for a fixed set of ranks
// (the workers of an all-reduce, the shards of a bulk-synchronous job)
// that says, when a round does not complete, which ranks are missing and
// why.
//
//	b := barrier.New(32, barrier.WithName("allreduce"), barrier.WithTimeout(2*time.Minute))
//	for step := 0; ; step++ {
//		computeGradients()
//		if _, err := b.Await(ctx, rank); err != nil {
//			var be *barrier.BrokenError
//			if errors.As(err, &be) {
//				log.Print(be.Report()) // who is missing, why, and the last generations
//			}
//			continue // or stop; the rank stays in step with the others either way
//		}
//		applyReduced()
//	}
//
// # Generations
//
// Ranks are 0..parties-1. Each round is a generation, numbered from 0. A
// generation completes when every participating rank has called
// [Barrier.Await]; all its waiters then return its number. Each call of a
// rank is for that rank's next generation, so a rank that fell behind a
// broken generation receives that generation's error at once and is back
// in step on its next call: ranks never drift into different generations.
// [WithAction] runs a function once per generation, in the last arriver,
// before anyone is released.
//
// # Bounded waits
//
// No wait is unbounded. Each Await is bounded by its context and by the
// barrier's timeout ([WithTimeout], ten minutes by default) counted from
// the generation's first arrival, whichever ends first. When one ends
// before the generation completes, the generation breaks: every waiter returns the same *[BrokenError], which
// matches [ErrBroken] and wraps the cause. A generation that completed
// before the end was noticed still succeeds, and an ending can never
// break a later generation, the bug of Java-style barriers ported to Go
// that check the round only on some exit paths. [Barrier.Abort] breaks a
// generation on purpose; [Barrier.Leave] removes a rank that died, so the
// others complete without it.
//
// # Why a rank is missing
//
// Java's and Python's barriers say only that the barrier broke;
// torch.distributed.monitored_barrier names the missing ranks. A
// [BrokenError] also says what each missing rank is doing, from
// syncwatch's registry of waits: the barrier remembers the goroutine of
// each rank's latest Await and, at the break, looks up what that
// goroutine is blocked on and who holds it:
//
//	rank 17: waiting for lock aggregation_lock#1, held by goroutine 812 (rank 3), which is waiting at this barrier
//
// That is the training-cluster hang of incident IR-2024-0319-001 in one
// line. Locks are followed only if they are lockorder locks: a rank
// blocked on a sync.Mutex, a channel or I/O is "not waiting in syncwatch
// (running, or blocked elsewhere)", and a rank that never called Await is
// "never arrived at this barrier".
//
// A rank that never called Await has no goroutine the barrier knows. If
// some goroutine is blocked on a lock held by a rank waiting here, the
// explanation of such a rank says so, without claiming the goroutine is
// that rank's:
//
//	rank 1: never arrived at this barrier; goroutine 42, of no known rank, is blocked on lock agg#1, held by goroutine 7 (rank 0), which is waiting at this barrier
//
// Only a lock's holder makes that link, and holders are known in
// lockorder's ModeCheck alone: in ModeTrace a lock wait is registered
// without its holder, and in ModeOff not at all, so such a rank is only
// "never arrived at this barrier".
//
// A break explains at most [MaxExplained] ranks, those whose goroutine is
// known first, and counts the others, so that a barrier of a hundred
// thousand ranks breaks on time. Its error's text gives ranks as ranges
// and is bounded in length whatever the number of parties:
//
//	barrier: broken: wide generation 0 after 50ms: 1/100000 arrived, missing [1-99999] (99999 ranks): rank 0 timed out after 50ms: context deadline exceeded; ranks 1-32 and 99967 more: never arrived at this barrier
//
// The [BrokenError]'s fields list every rank.
//
// Halfway through a waiter's bound, if ranks are still missing, the
// barrier makes an early warning once per generation ("31/32 arrived,
// missing [17]", with the same explanations): a barrier-slow violation
// marked Expected and a span event on the waiter's span.
//
// Every Await made while holding a lockorder lock is reported as a
// lock-held-at-barrier violation, since it is how the incident deadlocked;
// the wait proceeds.
//
// # Collective fingerprints
//
// [Op] labels an Await with the collective it is part of:
// b.Await(ctx, rank, barrier.Op("model.all_sum")). Ranks of one
// generation that arrive for different operations would wait for each
// other forever in the real collective (the RDMA incident: one rank in
// the model's all-reduce, the other in the control bus's), so the
// generation breaks at once with a *[MismatchError] as its cause, which
// matches [ErrCollectiveMismatch], names the ranks at each operation and
// gives each rank's count of collectives so far, per label. It is
// reported as a [KindCollectiveMismatch] violation. barrier/etcd, a
// nested module, checks the same across processes.
//
// # Flight recorder
//
// Like NCCL's flight recorder, a barrier keeps its last generations
// ([WithHistory], 64 by default): each rank's arrival time, the straggler
// and how late it was. [Barrier.History] returns them, and every
// BrokenError carries them, so a report shows whether rank 17 was the
// straggler of the last ten rounds before it went missing.
//
// # Reports and telemetry
//
// Broken generations, early warnings and locks held at a barrier go
// through lockorder's report pipeline (lockorder.ReportContext) as
// violations of kind [KindBroken], [KindSlow] and [KindLockHeld], so
// lockorder's handler, lockorder.Violations, lockordertest.VerifyNone and
// its spans see them like lock-order violations. Breaks caused by Abort or
// a canceled context are marked Expected. Span attributes are in the
// syncwatch.barrier namespace.
//
// The barrier's own tracer ([WithTracerProvider]) traces each wait that
// failed, or made its generation's slow report, as a "barrier wait" span; its meter
// ([WithMeterProvider]) records [MetricWaitDuration] and
// [MetricStragglerLag]. Both default to the global providers; only the
// OpenTelemetry API is used.
//
// # Cost
//
// An Await takes the barrier's mutex once; a waiter also adds an entry to
// the waits registry and blocks in a select. Each generation allocates its
// state and one timer, armed by its first waiter, which bounds all its
// waiters. A barrier's memory grows with the ranks that arrive at it, not
// with its parties: [New] allocates an index of pages of ranks, and a page
// is allocated when one of its ranks first arrives. A break costs a pass
// over the ranks to list the missing ones; its explanations, reports and
// texts are bounded. The barrier's mutex is a plain sync.Mutex, so it never appears
// in the program's lock-order graph, and it is never held while the
// action, a violation handler or telemetry runs. In lockorder's check mode
// each Await also asks which locks the caller holds. The explanation of a
// break, the reports and the history copies are built only when a
// generation breaks or is slow.
//
// BenchmarkRoundTrip (bench_test.go) measures a 32-party round trip on two
// cores against a mutex-and-channel barrier, a WaitGroup fork-join and
// github.com/marusama/cyclicbarrier, in the same run: the barrier takes
// about 2.5 times as long as cyclicbarrier and 4 times as long as the bare
// mutex-and-channel barrier, roughly a microsecond more per Await, spent
// on the arrival timestamps, the waits registry and the timeout that the
// others do without.
//
// Go's block profile shows that goroutines sit in a barrier; it cannot
// say which rank is missing or what that rank is waiting for, and a
// goroutine dump from a hung job shows the same thing for 31 goroutines.
package barrier
