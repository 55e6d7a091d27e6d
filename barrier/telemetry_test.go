package barrier_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncwatch/syncwatch/barrier"
	"github.com/syncwatch/syncwatch/lockorder"
)

func attrsOf(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func spansNamed(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func hasEvent(s sdktrace.ReadOnlySpan, name string) (sdktrace.Event, bool) {
	for _, e := range s.Events() {
		if e.Name == name {
			return e, true
		}
	}
	return sdktrace.Event{}, false
}

// Semantics 8 and 10: a broken generation is a barrier-broken span with
// the facts as syncwatch.barrier attributes; the early warning is a span
// event on the waiter's span; failed waits are "barrier wait" spans; wait
// durations and straggler lags are histograms.
func TestTelemetry(t *testing.T) {
	requireReporting(t)
	resetViolations(t)
	pipeline := tracetest.NewSpanRecorder()
	lockorder.Configure(lockorder.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(pipeline))))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithTracerProvider(otel.GetTracerProvider())) })

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	b := barrier.New(3, barrier.WithName("telemetry"), barrier.WithTimeout(200*time.Millisecond),
		barrier.WithTracerProvider(tp), barrier.WithMeterProvider(mp))

	runWithStraggler(t, b, 0, 2) // completes: two fast waits, one straggler lag

	// Generation 1: ranks 0 and 1 wait inside their own step spans; rank 2
	// never comes.
	var (
		wg    sync.WaitGroup
		steps [2]trace.Span
		errs  [2]error
	)
	for r := range 2 {
		wg.Go(func() {
			ctx, span := tp.Tracer("test").Start(context.Background(), fmt.Sprintf("step rank %d", r))
			steps[r] = span
			_, errs[r] = b.Await(ctx, r)
			span.End()
		})
	}
	waitGroup(t, &wg, 5*time.Second)
	var be *barrier.BrokenError
	require.ErrorAs(t, errs[0], &be)

	// The violation span, from lockorder's pipeline, child of a step span.
	broken := spansNamed(pipeline.Ended(), string(barrier.KindBroken))
	require.Len(t, broken, 1)
	s := broken[0]
	assert.Equal(t, codes.Error, s.Status().Code)
	a := attrsOf(s.Attributes())
	assert.Equal(t, "barrier", a["syncwatch.source"].AsString())
	assert.Equal(t, "telemetry", a["syncwatch.barrier.name"].AsString())
	assert.EqualValues(t, 1, a["syncwatch.barrier.generation"].AsInt64())
	assert.EqualValues(t, 3, a["syncwatch.barrier.parties"].AsInt64())
	assert.ElementsMatch(t, []int64{0, 1}, a["syncwatch.barrier.arrived"].AsInt64Slice())
	assert.Equal(t, []int64{2}, a["syncwatch.barrier.missing"].AsInt64Slice())
	assert.Contains(t, a["syncwatch.barrier.cause"].AsString(), "timed out after 200ms")
	assert.Equal(t, []string{"rank 2: not waiting in syncwatch (running, or blocked elsewhere)"}, a["syncwatch.barrier.why"].AsStringSlice())
	stepTraces := []trace.TraceID{steps[0].SpanContext().TraceID(), steps[1].SpanContext().TraceID()}
	assert.Contains(t, stepTraces, s.Parent().TraceID(), "the violation span is part of the breaking waiter's trace")
	require.Len(t, spansNamed(pipeline.Ended(), string(barrier.KindSlow)), 1)

	// The early warning: one event, on one of the two step spans.
	var withEvent []sdktrace.Event
	for _, st := range spans.Ended() {
		if e, ok := hasEvent(st, "syncwatch.barrier.slow"); ok && st.Name() != "barrier wait" {
			withEvent = append(withEvent, e)
		}
	}
	require.Len(t, withEvent, 1, "one early warning per generation")
	ea := attrsOf(withEvent[0].Attributes)
	assert.EqualValues(t, 2, ea["syncwatch.barrier.arrived_count"].AsInt64())
	assert.Equal(t, []int64{2}, ea["syncwatch.barrier.missing"].AsInt64Slice())
	assert.Contains(t, ea["syncwatch.barrier.message"].AsString(), "2/3 arrived, missing [2]")

	// The barrier's own spans: the two failed waits, not the fast ones.
	waitSpans := spansNamed(spans.Ended(), "barrier wait")
	require.Len(t, waitSpans, 2)
	var ranks []int64
	slowEvents := 0
	for _, ws := range waitSpans {
		assert.Equal(t, codes.Error, ws.Status().Code)
		wa := attrsOf(ws.Attributes())
		assert.Equal(t, "broken", wa["syncwatch.barrier.outcome"].AsString())
		assert.EqualValues(t, 1, wa["syncwatch.barrier.generation"].AsInt64())
		ranks = append(ranks, wa["syncwatch.barrier.rank"].AsInt64())
		if _, ok := hasEvent(ws, "syncwatch.barrier.slow"); ok {
			slowEvents++
		}
		assert.Equal(t, barrier.ScopeName, ws.InstrumentationScope().Name)
		assert.Equal(t, lockorder.Version, ws.InstrumentationScope().Version)
	}
	slices.Sort(ranks)
	assert.Equal(t, []int64{0, 1}, ranks)
	assert.Equal(t, 1, slowEvents)

	// Metrics.
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	assert.Equal(t, barrier.ScopeName, rm.ScopeMetrics[0].Scope.Name)
	got := map[string]metricdata.Aggregation{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		got[m.Name] = m.Data
		assert.Equal(t, "s", m.Unit, m.Name)
	}
	waitsHist, ok := got[barrier.MetricWaitDuration].(metricdata.Histogram[float64])
	require.True(t, ok)
	counts := map[string]uint64{}
	for _, dp := range waitsHist.DataPoints {
		o, _ := dp.Attributes.Value("syncwatch.barrier.outcome")
		n, _ := dp.Attributes.Value("syncwatch.barrier.name")
		assert.Equal(t, "telemetry", n.AsString())
		counts[o.AsString()] += dp.Count
	}
	assert.Equal(t, map[string]uint64{"completed": 2, "broken": 2}, counts)
	lag, ok := got[barrier.MetricStragglerLag].(metricdata.Histogram[float64])
	require.True(t, ok)
	require.Len(t, lag.DataPoints, 1)
	assert.EqualValues(t, 1, lag.DataPoints[0].Count)
	assert.GreaterOrEqual(t, lag.DataPoints[0].Sum, 0.002)

	_, err := b.Await(context.Background(), 2) // collect the late error
	assert.Same(t, be, err)
}
