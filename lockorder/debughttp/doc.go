// Package debughttp serves what syncwatch knows about a running process
// over HTTP: a health check for Kubernetes probes, and a live view of
// every goroutine blocked in a syncwatch wait, every deadlock, watched
// loop, barrier, staleness clock and parameter server, the locks held,
// the lock-order graph and the latest violations.
//
// Like net/http/pprof's handlers, nothing is registered by importing the
// package: the program mounts what it wants, where it wants.
//
//	mux.Handle("/healthz", debughttp.Health())
//	mux.Handle("/debug/syncwatch", debughttp.View())
//
// # Health
//
// [Health] answers 200 while nothing is stalled, and 503 with the reasons
// as JSON only when a loop watched by the watchdog package has work
// pending and has not stepped for longer than its bound, or when
// goroutines have been blocked in a cycle of syncwatch waits for
// [DeadlockGrace]. An idle loop is healthy however long it idles, so the
// check can be a liveness probe: a pod whose loops are stuck is
// restarted, one with nothing to do is left alone.
//
// # The live view
//
// [View] serves an HTML page, rendered on the server and readable without
// JavaScript, that reloads itself, and the same data as JSON with
// ?format=json ([State]). What it can show depends on lockorder's mode:
// in check mode every lock wait names its holder, so cycles of locks are
// deadlocks on the page and in the health check, and the lock-order graph
// is drawn; in trace mode (production's default) lock waits are listed
// without their holders. Barriers, clocks and parameter servers are
// listed while they are reachable: their packages register them weakly
// when they are created.
//
// # What it costs
//
// Nothing until a request comes. A health check with nothing stalled and
// no goroutine waiting looks at each watched loop and reads a counter. A
// request that finds goroutines waiting, or a loop stalled, takes a
// goroutine dump to say what they are doing; a dump stops the world, so
// dumps are shared with the rest of syncwatch and reused while they are
// younger than the waits shown: at most ten are taken a second however
// many requests come, and one a second while every wait is older than a
// second. The handlers keep no state and are safe for
// concurrent use.
package debughttp
