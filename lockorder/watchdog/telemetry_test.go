package watchdog_test

import (
	"context"
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
	"go.uber.org/goleak"

	"github.com/syncwatch/syncwatch/lockorder"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

// gauge returns the value of the int64 gauge or sum named name for loop,
// and whether it was found.
func metricValue(t *testing.T, reader *sdkmetric.ManualReader, name, loop string) (int64, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			assert.Equal(t, watchdog.ScopeName, sm.Scope.Name)
			var points []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				points = d.DataPoints
			case metricdata.Sum[int64]:
				points = d.DataPoints
			}
			for _, p := range points {
				if v, ok := p.Attributes.Value("syncwatch.loop.name"); ok && v.AsString() == loop {
					return p.Value, true
				}
			}
		}
	}
	return 0, false
}

// A stall is a span with status Error, named after the kind, and the
// metrics say so.
func TestStallSpanAndMetrics(t *testing.T) {
	requireReporting(t)
	defer goleak.VerifyNone(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	lockorder.Configure(lockorder.WithTracerProvider(tp))
	t.Cleanup(func() { lockorder.Configure(lockorder.WithTracerProvider(otel.GetTracerProvider())) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })

	loop := watchdog.New("telemetry", watchdog.WithBound(10*time.Millisecond), watchdog.WithMeterProvider(mp))
	loop.Step()
	v, ok := metricValue(t, reader, watchdog.MetricStalled, "telemetry")
	require.True(t, ok)
	assert.Zero(t, v)
	loop.Begin()
	loop.Begin()
	require.Eventually(t, func() bool { return len(stalls("telemetry")) == 1 }, 10*time.Second, time.Millisecond)

	// The report is recorded before its span ends: wait for the span.
	var span sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		for _, s := range rec.Ended() {
			if s.Name() == string(watchdog.KindStalled) {
				span = s
			}
		}
		return span != nil
	}, 10*time.Second, time.Millisecond)
	assert.Equal(t, codes.Error, span.Status().Code)
	attrs := attribute.NewSet(span.Attributes()...)
	name, _ := attrs.Value("syncwatch.loop.name")
	assert.Equal(t, "telemetry", name.AsString())
	pending, _ := attrs.Value("syncwatch.loop.pending")
	assert.Equal(t, int64(2), pending.AsInt64())
	src, _ := attrs.Value("syncwatch.source")
	assert.Equal(t, "watchdog", src.AsString())

	v, _ = metricValue(t, reader, watchdog.MetricStalled, "telemetry")
	assert.Equal(t, int64(1), v)
	v, _ = metricValue(t, reader, watchdog.MetricPending, "telemetry")
	assert.Equal(t, int64(2), v)
	v, _ = metricValue(t, reader, watchdog.MetricStalls, "telemetry")
	assert.Equal(t, int64(1), v)

	loop.Close()
	_, ok = metricValue(t, reader, watchdog.MetricStalled, "telemetry")
	assert.False(t, ok, "a closed loop is no longer observed")
}
