package main

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/lockorder/debughttp"
)

// newMux serves the inventory (see NewHandler), the worker's queue, the
// health check and the live view, and the bugs:
//
//	POST /recount/{item}         queues a recount for the worker loop
//	GET  /ledger                 the worker's latest recounts
//	GET  /healthz                200, or 503 with the stalled loops and deadlocks
//	GET  /debug/syncwatch        the live view (?format=json for JSON)
//	     /bug/stall, /bug/abba   faults on purpose (see Bugs)
func newMux(inv *Inventory, worker *Worker, bugs *Bugs, tp trace.TracerProvider) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/", NewHandler(inv, tp))
	mux.HandleFunc("POST /recount/{item}", func(w http.ResponseWriter, r *http.Request) {
		if err := worker.Enqueue(r.PathValue("item")); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("GET /ledger", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), lockTimeout)
		defer cancel()
		entries, err := worker.Ledger(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, e := range entries {
			w.Write([]byte(e + "\n"))
		}
	})
	mux.Handle("/healthz", debughttp.Health())
	mux.Handle("/debug/syncwatch", debughttp.View())
	bugs.register(mux)
	return mux
}
