// Package watchdog watches the loops a service lives by (an inference
// loop, a training step, a queue consumer) and reports the one that has
// stalled: work is pending and the loop has not stepped for longer than
// its bound. An idle loop, one with nothing pending, is never stalled,
// however long it waits.
//
//	loop := watchdog.New("inference", watchdog.WithBound(30*time.Second))
//	defer loop.Close()
//	for {
//		loop.Step()       // at the top of each iteration, before blocking
//		req := <-queue    // idle here: nothing pending
//		serve(req)        // stalls here if serve blocks
//		loop.End()        // the request's Begin was at enqueue
//	}
//
// Work is counted with [Loop.Begin] and [Loop.End] (Begin when a request
// is queued for the loop, End when it is done), or with a function that
// returns how much is pending ([WithPending]), or both.
//
// # What is reported
//
// A stall is reported once per episode, as a lockorder violation of kind
// [KindStalled] through lockorder.Report, so the handler,
// lockorder.Violations, lockordertest and a span with status Error all see
// it; the [MetricStalls] counter counts it and the [MetricStalled] gauge
// is 1 while it lasts. The episode ends at the next Step, and only then:
// work that is done and comes back while the loop still does not step
// stays in the same episode, however often. A stall after a Step is a new
// episode. The report says what the loop's goroutine (the one that
// last called Step) is blocked on: if it is in a syncwatch wait, the
// wait-for graph follows it to the holder and says what the holder is
// doing ("lock ledger#1, held by goroutine 28, which is blocked in select
// at ..."); if not, a goroutine dump says where it is ("chan receive at
// main.worker (worker.go:42), not a syncwatch wait").
//
// [Stalls] lists the loops stalled now, computed when asked, not from the
// reports: a health check built on it (debughttp.Health) says 503 the
// moment the bound is passed, and 200 again after the next Step.
//
// # What it costs
//
// Step reads the monotonic clock and makes three atomic stores; Begin and
// End are an atomic compare-and-swap and an add. Each loop is looked at by
// a timer every eighth of its bound (at most once a second, at least every
// 5ms): no goroutine runs between looks, and [Loop.Close] stops the timer.
// A loop's state is a fixed set of fields, and each stall episode adds one
// report to lockorder's bounded store, so memory stays bounded however
// long the process runs. A look at a loop with nothing pending does no
// more than load its counters; explaining a stall takes a snapshot of the
// waits and a goroutine dump, which stops the world: a dump is reused
// while it is younger than the stall and than the wait it explains (at
// least 100ms old, or the bound if shorter; at most a second), so once
// stalls are over a second old at most one is taken a second, however
// many loops stall and however often [Stalls] is called.
package watchdog
