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
// Flags:
//
//	-addr ADDR  the address to listen on (default 127.0.0.1:0, a free loopback port)
//	-serve      keep serving until interrupted instead of running the demo
package main
