package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// newTracerProvider returns an SDK tracer provider exporting to w, one
// JSON object a line. It also prints a line to w for each "lock wait"
// span. It names the exporter.
//
// A real service exports to a collector instead: replace stdouttrace.New
// with otlptracehttp.New(ctx) (go.opentelemetry.io/otel/exporters/otlp/
// otlptrace/otlptracehttp, configured by the OTEL_EXPORTER_OTLP_*
// variables). The example does not, so that syncwatch's module does not
// require the exporter's dependencies (gRPC, protobuf) for every user.
func newTracerProvider(_ context.Context, w io.Writer) (*sdktrace.TracerProvider, string, error) {
	exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
	if err != nil {
		return nil, "", err
	}
	name := "stdout"
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithSpanProcessor(&lockWaitPrinter{w: w}),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("syncwatch-service"))),
	)
	return tp, name, nil
}

// lockWaitPrinter prints a line for each "lock wait" span as it ends.
type lockWaitPrinter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *lockWaitPrinter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (p *lockWaitPrinter) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.Name() != "lock wait" {
		return
	}
	var lock string
	for _, kv := range s.Attributes() {
		if kv.Key == "syncwatch.lock.name" {
			lock = kv.Value.AsString()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "lock wait span: %s, waited %v (trace %s, parent span %s)\n",
		lock, s.EndTime().Sub(s.StartTime()).Round(time.Millisecond), s.SpanContext().TraceID(), s.Parent().SpanID())
}

func (p *lockWaitPrinter) Shutdown(context.Context) error   { return nil }
func (p *lockWaitPrinter) ForceFlush(context.Context) error { return nil }
