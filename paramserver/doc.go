// Package paramserver is an in-process parameter server: versioned
// parameters that workers read ([Server.Get]) and update with gradients
// ([Server.Apply]) under a staleness bound, with every version observable
// in order ([Server.Watch]).
//
// It is built to make impossible the failures of incident
// IR-2024-0319-001: workers received torn or stale parameters, versions
// were skipped, and gradients staler than the bound were applied because
// the check only logged, with an off-by-one.
//
// # Versions and snapshots
//
// The server holds one version counter, as etcd holds revisions: version 0
// is the parameters given to [New], and each accepted update adds exactly
// 1, in the same critical section that changes the parameters. A
// [Snapshot] pairs a version with its parameters and is immutable: updates
// are copy-on-write, so [Server.Get] is a single atomic load, never torn,
// never blocked by writers, and a snapshot a worker holds never changes
// under it. Each worker's reads are monotonic; a read that went backwards
// would be reported as a [KindVersionRegression] violation.
//
// # Staleness
//
// A gradient computed on version base is applied at version current iff
// base <= current and current-base <= the bound ([WithMaxStaleness],
// default 0: synchronous), checked with [staleness.Policy] against the
// version at publication time, inside the critical section. A rejected
// gradient returns a *[staleness.StaleError] and changes nothing.
//
// With [WithAggregation] the server is synchronous, like TensorFlow's
// SyncReplicasOptimizer: k gradients on the current version are averaged
// into one version. Unlike SyncReplicasOptimizer, stale gradients are not
// dropped silently: they are rejected with the same error, counted and
// reported.
//
// # Workers
//
// Workers are numbered from 0. [WithWorkers](n) declares workers 0 to
// n-1, whose state is allocated in [New]; any other number panics.
// Without it, the server accepts workers 0 to [MaxUndeclaredWorkers]-1
// and makes each one's state on its first call, so its memory grows with
// the workers that use it; a number outside panics. Either way, Get finds
// a worker's state in a table it reads without locking, and touches no
// shared map.
//
// # Concurrency
//
// Parameters are dealt over up to 16 shards, each guarded by a lockorder
// mutex of class "paramserver.shard". An Apply locks the shards its
// gradient touches, always in increasing shard order, computes the new
// tensors, then takes the commit lock ("paramserver.commit", always after
// the shards) to re-check the staleness and publish. Sparse gradients on
// disjoint shards therefore compute in parallel; publication is short.
// Because every writer follows one order, lockorder's check mode never
// reports the server, and the package's tests run under
// lockordertest.VerifyTestMain to prove it.
//
// No user code runs under these locks, with one exception: the
// [WithUpdate] function, which by nature computes the new tensors inside
// the critical section. It must not block or take locks; if it panics,
// nothing is published and the server stays consistent.
//
// # History and watching
//
// The server keeps the last n versions ([WithHistory], default
// [DefaultHistory]). [Server.Watch] yields every version from a given one
// in order; if a version it needs was already dropped, it ends with a
// *[HistoryError] instead of skipping. [Server.WaitVersion] waits for a
// version. Every wait is bounded by its context and by [WithMaxWait]
// (default [DefaultMaxWait]) and ends with a *[WaitError].
//
// # Reports and telemetry
//
// Every rejected gradient is counted in [Server.Stats] (per worker: by
// reason, with a staleness histogram), counted by the
// syncwatch.paramserver.gradients metric and traced as a
// "paramserver.Apply" span with status Error and the worker, versions,
// staleness and bound as attributes.
//
// Rejections of stale and future gradients are also handed to lockorder's
// report pipeline, as children of that span. A stale gradient is reported
// as [KindStaleRejected] with Expected set: it is the server working as
// designed, so lockordertest.VerifyNone ignores it unless asked. A future
// gradient ([KindFutureRejected]) is a bug in the caller and is not
// Expected. The pipeline keeps one report per distinct message, and holds
// a bounded number shared with every real bug, so the message names the
// server, the worker and a power-of-two band of staleness past the bound
// (11, 12-13, 14-17, ... for a bound of 10), each report carrying the
// figures of its first occurrence. That is at most one report per worker
// and power of two: 64 workers with gradients up to a thousand versions
// past the bound make at most 640, however long they train.
//
// # Errors and panics
//
// Programmer errors panic with the prefix "paramserver: ": a worker out of
// range, a nil context, a meaningless option (WithHistory(0), a learning
// rate that is not finite and positive) or contradictory ones. Runtime
// conditions are errors matching a sentinel through errors.Is and giving
// an ErrorType: *[staleness.StaleError], *[ShapeError] ([ErrShape]),
// *[NonFiniteError] ([ErrNonFinite]), *[HistoryError]
// ([ErrHistoryTrimmed]) and *[WaitError] ([ErrWaitTimeout]).
//
// # Non-finite values
//
// The server never holds a NaN or an infinity: [New] refuses initial
// parameters with one, and [Server.Apply] a gradient with one, or whose
// update would make one (an overflow, a [WithUpdate] function that
// produced one, an aggregation round whose sum would overflow), with a
// *[NonFiniteError] that locates the value. Like every rejection, it
// changes nothing and is counted (WorkerStats.NonFinite) and traced.
//
// # Versions and etcd revisions
//
// The server stays in one process; barrier/etcd (a nested module) takes
// barriers and SSP clocks across processes, not parameters. Its version
// model is etcd's revision model: one counter for the whole store, +1 per
// accepted write, in the same atomic step as the write, and a watcher
// ([Server.Watch], like an etcd watch) receives every version in order
// or an explicit error ([ErrHistoryTrimmed], like etcd's ErrCompacted),
// never a gap. [WithHistory] is etcd's compaction.
//
// Tensor-sized parameters do not belong in etcd: a value is limited to
// about 1.5 MiB by default (--max-request-bytes), every write is
// replicated through raft to a quorum and fsynced before it is
// acknowledged, and every version stays in etcd's MVCC history, and its
// database (a few GiB by default, --quota-backend-bytes), until
// compaction and defragmentation. A gradient step of a large model would
// be many such writes per worker per step. Keep tensors in the parameter
// server (or shards of it) and, if a cluster needs to agree on them, put
// only small facts in etcd: the current version, a checksum, who holds
// which shard.
//
// # Cost
//
// Get: four atomic loads (the worker table, the worker's state, its last
// read, the current version) and, when the version moved, a
// compare-and-swap; no allocation after a worker's first call. Apply:
// reads the gradient once to check that it is finite, copies the tensors
// it changes (copy-on-write) and the parameter map's headers, and reads
// the new tensors once to check them; accepted gradients are counted, not
// traced.
package paramserver
