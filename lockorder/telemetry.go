//go:build !syncwatch_off

package lockorder

import (
	"context"
	"fmt"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"
	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/internal/stack"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// maxStackAttr caps the code.stacktrace attribute.
const maxStackAttr = 4096

// tracer returns the tracer of the provider set with WithTracerProvider, or
// nil if none is set: then nothing is traced.
//
// It does not fall back on the provider of the caller's span: the only way
// to it, Span.TracerProvider, links OpenTelemetry's auto-instrumentation
// SDK (encoding/json and more, a sixth of a one-mutex program) into every
// program, whether it traces or not.
func tracer(c *config) trace.Tracer {
	if c.tracerProvider == nil {
		return nil
	}
	return c.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version))
}

// emitSpan records v as one span with status Error. It runs with no
// internal lock held.
func emitSpan(ctx context.Context, c *config, v Violation) {
	tr := tracer(c)
	if tr == nil {
		return
	}
	_, span := tr.Start(ctx, string(v.Kind),
		trace.WithTimestamp(v.Time), trace.WithAttributes(violationAttrs(v)...))
	if !span.IsRecording() {
		span.End()
		return
	}
	err := v.Err
	if err == nil {
		err = &ViolationError{Kind: v.Kind, Message: v.Message}
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, v.Message)
	span.End()
}

func violationAttrs(v Violation) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("syncwatch.kind", string(v.Kind)),
		attribute.String("syncwatch.source", v.source()),
		attribute.Int64("thread.id", v.Goroutine),
	}
	if len(v.Locks) > 0 {
		names, classes := make([]string, len(v.Locks)), make([]string, len(v.Locks))
		for i, l := range v.Locks {
			names[i], classes[i] = l.Name, l.Class
		}
		attrs = append(attrs,
			attribute.StringSlice("syncwatch.lock.names", names),
			attribute.StringSlice("syncwatch.lock.classes", classes))
	}
	if len(v.Cycle) > 0 {
		edges := make([]string, len(v.Cycle))
		gids := make([]int64, len(v.Cycle))
		for i, e := range v.Cycle {
			edges[i] = fmt.Sprintf("%s -> %s", e.From, e.To)
			gids[i] = e.Goroutine
		}
		attrs = append(attrs,
			attribute.StringSlice("syncwatch.cycle.edges", edges),
			attribute.Int64Slice("syncwatch.cycle.goroutines", gids))
	}
	if v.Holder != 0 {
		attrs = append(attrs, attribute.Int64("syncwatch.holder.goroutine", v.Holder))
	}
	if v.Waited > 0 {
		attrs = append(attrs, attribute.Int64("syncwatch.wait.duration_ns", v.Waited.Nanoseconds()))
	}
	if len(v.Stack) > 0 {
		st := v.Stack.String()
		if len(st) > maxStackAttr {
			st = st[:maxStackAttr]
		}
		attrs = append(attrs, attribute.String("code.stacktrace", st))
	}
	return append(attrs, v.Attrs...)
}

// observeWait records a contended lock wait that began at the mono reading
// from and has just ended: in the wait histogram and the wait profile
// always, and as a "lock wait" span, with the waiter's stack in the
// profile, if it lasted at least the configured threshold. It runs only
// after a wait, never on the uncontended path.
func observeWait(ctx context.Context, l *class.Lock, from int64, holder int64) {
	d := mono.Since(from)
	c := cfg.Load()
	recordWaitMetric(c, l, d)
	long := d >= c.waitThreshold
	var st stack.ID
	if long {
		st = stack.Capture() // where the waiter called Lock: in the profile and the span
	}
	recordWaitProfile(l, d, long, st)
	if !long {
		return
	}
	tr := tracer(c)
	if tr == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("syncwatch.lock.name", l.Name()),
		attribute.String("syncwatch.lock.class", l.ClassName()),
		attribute.Int64("syncwatch.wait.duration_ns", d.Nanoseconds()),
	}
	if f := stack.Top(st); f.Function != "" {
		// OpenTelemetry's code attributes: where the waiting Lock was called.
		attrs = append(attrs,
			attribute.String("code.function.name", f.Function),
			attribute.String("code.file.path", f.File),
			attribute.Int("code.line.number", f.Line))
	}
	if holder != 0 {
		attrs = append(attrs, attribute.Int64("syncwatch.holder.goroutine", holder))
	}
	// The wall clock now, less the monotonic duration: right even if the
	// wall clock was stepped, or the machine slept, since the process began.
	start := time.Now().Add(-d)
	_, span := tr.Start(ctx, "lock wait", trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(start.Add(d)))
}
