package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// newTracerProvider returns an SDK tracer provider exporting to an OTLP
// collector over HTTP when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and otherwise to w, one JSON
// object a line. It also prints a line to w for each "lock wait" span, so
// that they show whichever the exporter. It names the exporter it chose.
func newTracerProvider(ctx context.Context, w io.Writer) (*sdktrace.TracerProvider, string, error) {
	var (
		exp  sdktrace.SpanExporter
		name string
		err  error
	)
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		exp, err = otlptracehttp.New(ctx) // configured by the OTEL_EXPORTER_OTLP_* variables
		name = "OTLP/HTTP"
	} else {
		exp, err = stdouttrace.New(stdouttrace.WithWriter(w))
		name = "stdout"
	}
	if err != nil {
		return nil, "", err
	}
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
