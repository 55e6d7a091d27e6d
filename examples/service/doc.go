// Command service is a small HTTP service whose state is guarded by a
// lockorder.Mutex in trace mode, the mode meant for production: it costs
// what sync.Mutex costs plus one atomic load, keeps no lock-order graph,
// and turns every contended wait longer than 10ms into a "lock wait" span.
//
// The service keeps stock counts. POST /restock/{item} recounts holding the
// lock (slowly, on purpose); GET /stock/{item} waits for the lock with
// LockContext, bounded by the request, so its wait is a child span of the
// request's span and a request that cannot get the lock in time gets 503.
//
//	go run ./examples/service           # demo: one slow restock, three reads behind it
//	go run ./examples/service -serve    # keep serving on -addr until interrupted
//
// The demo listens on a loopback port, makes its requests, prints a line for
// each "lock wait" span and exports every span to standard output as JSON
// lines. (A real service would export to a collector with the OTLP
// exporter: see newTracerProvider.)
//
// # A hung process says why
//
// With -serve the service also has a background worker loop, watched by
// syncwatch's watchdog, and mounts syncwatch's health check and live view
// (package debughttp), with two bugs to set off on purpose:
//
//	go run ./examples/service -serve -addr 127.0.0.1:8080
//	curl localhost:8080/healthz                # 200 {"status":"ok"}, however long it idles
//	curl localhost:8080/bug/stall              # the worker loop stalls with a recount pending
//	curl localhost:8080/healthz                # after 3s: 503, naming the loop and what it is blocked on
//	curl localhost:8080/bug/abba               # two requests deadlock on worker_lock and aggregation_lock
//	open http://localhost:8080/debug/syncwatch # the cycle, both locks, both stacks
//	curl 'localhost:8080/debug/syncwatch?format=json'
//
// -serve runs lockorder in check mode (unless SYNCWATCH_MODE says
// otherwise): it tracks who holds each lock, which is what lets the page
// and /healthz name the deadlock; in trace mode they list the waits
// without holders. Deadlocks are reported and left blocked, as sync would
// leave them, and the flight recorder writes the last 10s of execution
// trace of each hang to -trace-dir, for go tool trace. Interrupting the
// service ends the bugs and exits cleanly.
//
// Flags:
//
//	-addr ADDR          the address to listen on (default 127.0.0.1:0, a free loopback port)
//	-serve              keep serving until interrupted instead of running the demo
//	-stall-bound D      how long the worker loop may go without a step with work pending (default 3s)
//	-trace-dir DIR      with -serve, where execution traces of hangs go (default $TMPDIR/syncwatch-traces; empty: none)
package main
