package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/lockorder"
)

// lockTimeout bounds every lock wait of a request: a request that cannot
// get the inventory in time gets 503 rather than hanging.
const lockTimeout = 2 * time.Second

// NewHandler serves the inventory:
//
//	GET  /stock/{item}                       {"item": ..., "count": ...}
//	POST /restock/{item}?n=N&work=DURATION   adds N after a recount of DURATION (default 200ms)
//
// Each request is a server span from tp's tracer; lock waits are its
// children.
func NewHandler(inv *Inventory, tp trace.TracerProvider) http.Handler {
	tracer := tp.Tracer("github.com/syncwatch/syncwatch/examples/service")
	mux := http.NewServeMux()
	handle := func(pattern string, h func(http.ResponseWriter, *http.Request) error) {
		mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, span := tracer.Start(r.Context(), pattern,
				trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
			defer span.End()
			ctx, cancel := context.WithTimeout(ctx, lockTimeout)
			defer cancel()
			if err := h(w, r.WithContext(ctx)); err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
				status := http.StatusBadRequest
				if errors.Is(err, lockorder.ErrWaitAbandoned) || errors.Is(err, context.DeadlineExceeded) {
					status = http.StatusServiceUnavailable
				}
				http.Error(w, err.Error(), status)
			}
		}))
	}
	handle("GET /stock/{item}", func(w http.ResponseWriter, r *http.Request) error {
		item := r.PathValue("item")
		n, err := inv.Stock(r.Context(), item)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(map[string]any{"item": item, "count": n})
	})
	handle("POST /restock/{item}", func(w http.ResponseWriter, r *http.Request) error {
		n, work := 1, 200*time.Millisecond
		var err error
		if s := r.URL.Query().Get("n"); s != "" {
			if n, err = strconv.Atoi(s); err != nil {
				return err
			}
		}
		if s := r.URL.Query().Get("work"); s != "" {
			if work, err = time.ParseDuration(s); err != nil {
				return err
			}
		}
		if err := inv.Restock(r.Context(), r.PathValue("item"), n, work); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	return mux
}
