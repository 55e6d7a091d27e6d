package barrier

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/lockorder"
)

// ScopeName is the instrumentation scope of the barrier's tracer and meter.
const ScopeName = "github.com/syncwatch/syncwatch/barrier"

// The barrier's metric instruments.
const (
	// MetricWaitDuration is a histogram of the seconds each blocking Await
	// waited, with attributes syncwatch.barrier.name and
	// syncwatch.barrier.outcome ("completed" or "broken").
	MetricWaitDuration = "syncwatch.barrier.wait.duration"
	// MetricStragglerLag is a histogram of the seconds from a completed
	// generation's first arrival to its last, with attribute
	// syncwatch.barrier.name.
	MetricStragglerLag = "syncwatch.barrier.straggler.lag"
)

// buckets suit waits from 100µs to the default ten-minute bound.
var buckets = []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600}

// telemetry holds one barrier's tracer and instruments, created once in
// New, and the measurement options, built once so that recording does not
// allocate.
type telemetry struct {
	tracer     trace.Tracer
	wait       metric.Float64Histogram
	lag        metric.Float64Histogram
	name       attribute.KeyValue
	okOpts     []metric.RecordOption
	brokenOpts []metric.RecordOption
	lagOpts    []metric.RecordOption
}

func newTelemetry(c *config) *telemetry {
	tp, mp := c.tp, c.mp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(ScopeName, metric.WithInstrumentationVersion(lockorder.Version))
	t := &telemetry{
		tracer: tp.Tracer(ScopeName, trace.WithInstrumentationVersion(lockorder.Version)),
		name:   attribute.String("syncwatch.barrier.name", c.name),
	}
	var err error
	t.wait, err = meter.Float64Histogram(MetricWaitDuration, metric.WithUnit("s"),
		metric.WithDescription("Time a rank waited in a blocking Await."),
		metric.WithExplicitBucketBoundaries(buckets...))
	if err != nil {
		otel.Handle(err)
	}
	if t.wait == nil {
		t.wait = noop.Float64Histogram{}
	}
	t.lag, err = meter.Float64Histogram(MetricStragglerLag, metric.WithUnit("s"),
		metric.WithDescription("Time from a generation's first arrival to its last."),
		metric.WithExplicitBucketBoundaries(buckets...))
	if err != nil {
		otel.Handle(err)
	}
	if t.lag == nil {
		t.lag = noop.Float64Histogram{}
	}
	outcome := func(o string) []metric.RecordOption {
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(t.name, attribute.String("syncwatch.barrier.outcome", o)))}
	}
	t.okOpts, t.brokenOpts = outcome("completed"), outcome("broken")
	t.lagOpts = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(t.name))}
	return t
}

// waited records a blocking Await that began at start and returned err.
// A wait that failed, or that made its generation's slow report, is
// traced as a "barrier wait" span.
func (t *telemetry) waited(ctx context.Context, rank int, gen uint64, start time.Time, slow []attribute.KeyValue, slowAt time.Time, err error) {
	record := t.wait.Enabled(ctx)
	if !record && err == nil && slow == nil {
		return
	}
	end := time.Now()
	if record {
		opts := t.okOpts
		if err != nil {
			opts = t.brokenOpts
		}
		t.wait.Record(ctx, end.Sub(start).Seconds(), opts...)
	}
	if err == nil && slow == nil {
		return
	}
	outcome := "completed"
	if err != nil {
		outcome = "broken"
	}
	_, span := t.tracer.Start(ctx, "barrier wait", trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(t.name,
			attribute.Int("syncwatch.barrier.rank", rank),
			attribute.Int64("syncwatch.barrier.generation", int64(gen)),
			attribute.String("syncwatch.barrier.outcome", outcome)))
	if slow != nil {
		span.AddEvent("syncwatch.barrier.slow", trace.WithTimestamp(slowAt), trace.WithAttributes(slow...))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End(trace.WithTimestamp(end))
}

// completed records the straggler lag of a completed generation.
func (t *telemetry) completed(ctx context.Context, lag time.Duration) {
	if t.lag.Enabled(ctx) {
		t.lag.Record(ctx, lag.Seconds(), t.lagOpts...)
	}
}
