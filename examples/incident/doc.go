// Command incident replays the training-cluster hang of incident
// IR-2024-0319-001 with syncwatch dropped in, and shows each of its four
// causes caught: the first two before they do any harm, the last with the
// name of the missing worker and the reason it is missing.
//
//	go run ./examples/incident          # the incident's design
//	go run ./examples/incident -fixed   # the corrected design
//
// # The story
//
// 32 workers train a linear regression (synthetic data, so the loss visibly
// falls) through an all-reduce coordinator and a parameter server, built as
// the incident's were:
//
//   - submit_gradients takes worker_lock, then aggregation_lock;
//     get_reduced_gradients takes aggregation_lock, waits at the all-reduce
//     barrier (32 parties) holding it, then takes worker_lock;
//   - the parameter server's get_parameters and apply_gradient take no lock;
//   - workers 23, 17 and 9 push late gradients, 15, 12 and 18 versions old
//     (the incident's figures), and worker 5 one exactly 10 old, against a
//     staleness bound of 10.
//
// What changed is only the primitives: the locks are lockorder mutexes in
// check mode, the parameter server's state asserts its lock with
// lockorder's Mutex.AssertHeld, the barrier is a barrier.Barrier with a
// timeout, and staleness.Policy replaces the incident's check, which was off
// by one and only logged.
//
// Phase 1 trains for 24 steps on the schedule production ran for months:
// the reducer (rank 3) always reaches the barrier last, so the two lock
// orders never overlap and nothing deadlocks. lockorder reports the cycle
// between the two locks the first time the second order runs, with both
// paths; the barrier reports the lock held while waiting; AssertHeld reports
// the unlocked parameter server; the late gradients are rejected, and the
// one at the bound accepted.
//
// Phase 2 replays 14:12: rank 17's data loader stalls, so it reaches
// submit_gradients, takes worker_lock and blocks on aggregation_lock, held by
// rank 3, which is waiting at the barrier for rank 17. The barrier's timeout
// breaks the generation, and its error says
//
//	rank 17: waiting for lock aggregation_lock#1, held by goroutine N (rank 3), which is waiting at this barrier
//
// Rank 3's Await fails, it releases the lock, rank 17 gets free, and the next
// generation completes with all 32 ranks before the program ends.
//
// The run ends with a table of the incident's symptoms (ABBA deadlock,
// parameter-server race, staleness check that only logged, barrier stuck at
// 31/32), what caught each, with which violation kind, and when. It is filled
// from what the run observed: a symptom that was not caught is shown as
// NOT CAUGHT, and the program exits with status 1.
//
// With -fixed the same workers, data and schedule run the corrected design:
// one lock order and no lock held at the barrier, and paramserver.Server,
// whose reads are snapshots and which checks the staleness bound where it
// publishes a version. The run reports no violation that counts (the
// rejected late gradients are expected ones), the loss falls below 0.01,
// and a paramserver.Watch from version 0 receives every version in order,
// with no gap. Otherwise it exits with status 1.
//
// # Output files
//
// Each run writes, to the -out directory, and prints the paths of:
//
//   - spans.jsonl: every span, one JSON object a line (an SDK tracer
//     provider with the stdouttrace exporter, given to lockorder, the
//     barrier and the parameter server): violations, lock waits, failed
//     barrier waits, rejected gradients;
//   - lockgraph.dot and, if Graphviz's dot is on PATH, lockgraph.svg: the
//     lock-order graph, the cycle in red (lockorder.WriteDOT);
//   - waits.pb.gz: the contended lock waits, for go tool pprof
//     (lockorder.WriteWaitProfile).
//
// # Flags
//
//	-fixed      run the corrected design
//	-out DIR    where to write the files (default: a new temporary directory,
//	            kept, and named at the end)
//	-timeout D  the barrier's timeout, after which phase 2 breaks (default 1.5s)
//	-deadline D bound on the whole run (default 30s)
//	-v          print every report in full, with its stacks
//
// Every wait in the program is bounded, and no goroutine is left running
// when it exits.
package main
