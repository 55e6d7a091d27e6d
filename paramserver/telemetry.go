package paramserver

import (
	"context"
	"math"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/lockorder"
)

// ScopeName is the instrumentation scope of the server's tracer and meter.
const ScopeName = "github.com/syncwatch/syncwatch/paramserver"

// The outcomes of a gradient, as the syncwatch.outcome metric attribute.
const (
	outAccepted = iota
	outTooStale
	outFuture
	outShape
	outNonFinite
	outcomes
)

var outcomeNames = [outcomes]string{"accepted", "too-stale", "future-version", "shape-mismatch", "non-finite"}

// telemetry holds the server's instruments. The attribute options of each
// worker and outcome are built once per worker (workerOptions) and kept
// in its state, so that recording allocates nothing.
type telemetry struct {
	tracer    trace.Tracer
	gradients metric.Int64Counter
	staleness metric.Int64Histogram
}

func newTelemetry(c *config) telemetry {
	tp := c.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := c.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t := telemetry{tracer: tp.Tracer(ScopeName, trace.WithInstrumentationVersion(lockorder.Version))}
	meter := mp.Meter(ScopeName, metric.WithInstrumentationVersion(lockorder.Version))
	var err error
	t.gradients, err = meter.Int64Counter("syncwatch.paramserver.gradients",
		metric.WithDescription("Gradients submitted to the parameter server, by worker and outcome."),
		metric.WithUnit("{gradient}"))
	if err != nil {
		otel.Handle(err)
		t.gradients = noop.Int64Counter{}
	}
	bounds := make([]float64, histogramBuckets(c.maxStaleness)-1)
	for i := range bounds {
		bounds[i] = float64(i)
	}
	t.staleness, err = meter.Int64Histogram("syncwatch.paramserver.staleness",
		metric.WithDescription("Staleness of the gradients checked against the bound: server version minus the gradient's base version."),
		metric.WithUnit("{version}"),
		metric.WithExplicitBucketBoundaries(bounds...))
	if err != nil {
		otel.Handle(err)
		t.staleness = noop.Int64Histogram{}
	}
	return t
}

// workerOptions returns the attribute options of worker w, by outcome.
func (t *telemetry) workerOptions(w int) (add [outcomes][]metric.AddOption, rec [outcomes][]metric.RecordOption) {
	for o := range outcomes {
		opt := metric.WithAttributeSet(attribute.NewSet(
			attribute.Int("syncwatch.worker", w),
			attribute.String("syncwatch.outcome", outcomeNames[o])))
		add[o] = []metric.AddOption{opt}
		rec[o] = []metric.RecordOption{opt}
	}
	return add, rec
}

// count records one gradient of the worker whose state is ws, with
// outcome o, and its staleness if it was checked against the bound.
func (t *telemetry) count(ctx context.Context, ws *workerState, o int, staleness uint64, checked bool) {
	t.gradients.Add(ctx, 1, ws.add[o]...)
	if checked {
		t.staleness.Record(ctx, i64(staleness), ws.rec[o]...)
	}
}

// i64 converts a version or staleness for an attribute, saturating.
func i64(u uint64) int64 { return int64(min(u, math.MaxInt64)) }
