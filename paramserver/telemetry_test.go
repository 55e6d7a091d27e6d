package paramserver_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncwatch/syncwatch/paramserver"
)

func attrs(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// rejectionWorkload applies one accepted gradient and one of each kind of
// rejection, from worker 1, with bound 1.
func rejectionWorkload(t *testing.T, opts ...paramserver.Option) *paramserver.Server {
	t.Helper()
	opts = append(opts, paramserver.WithMaxStaleness(1), paramserver.WithWorkers(2))
	s := newServer(t, paramserver.Params{"w": {0}}, opts...)
	grad := paramserver.Params{"w": {1}}
	advance(t, s, 5, grad)
	ctx := context.Background()
	_, err := s.Apply(ctx, 1, grad, 4) // staleness 1: accepted
	require.NoError(t, err)
	_, err = s.Apply(ctx, 1, grad, 2) // staleness 4: too stale
	require.Error(t, err)
	_, err = s.Apply(ctx, 1, grad, 9) // future
	require.Error(t, err)
	_, err = s.Apply(ctx, 1, paramserver.Params{"w": {1, 2}}, 6) // shape
	require.Error(t, err)
	_, err = s.Apply(ctx, 1, paramserver.Params{"w": {float32(math.NaN())}}, 6) // non-finite
	require.Error(t, err)
	consume(t, paramserver.KindFutureRejected)
	return s
}

func TestEveryRejectionIsASpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	s := rejectionWorkload(t, paramserver.WithTracerProvider(tp))

	var spans []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == "paramserver.Apply" {
			spans = append(spans, sp)
		}
	}
	require.Len(t, spans, 4, "one per rejection, none for accepted gradients")
	for _, sp := range spans {
		assert.Equal(t, codes.Error, sp.Status().Code)
		assert.Equal(t, paramserver.ScopeName, sp.InstrumentationScope().Name)
		a := attrs(sp.Attributes())
		assert.Equal(t, int64(1), a["syncwatch.worker"].AsInt64())
		assert.Equal(t, s.String(), a["syncwatch.paramserver"].AsString())
		require.Len(t, sp.Events(), 1, "the error is recorded")
		assert.Equal(t, "exception", sp.Events()[0].Name)
	}
	stale := attrs(spans[0].Attributes())
	assert.Equal(t, "too-stale", stale["error.type"].AsString())
	assert.Equal(t, int64(4), stale["syncwatch.staleness"].AsInt64())
	assert.Equal(t, int64(1), stale["syncwatch.staleness.bound"].AsInt64())
	assert.Equal(t, int64(6), stale["syncwatch.version"].AsInt64())
	assert.Equal(t, int64(2), stale["syncwatch.version.base"].AsInt64())
	assert.Contains(t, spans[0].Status().Description, "staleness 4 exceeds bound 1")

	future := attrs(spans[1].Attributes())
	assert.Equal(t, "future-version", future["error.type"].AsString())
	assert.Equal(t, int64(0), future["syncwatch.staleness"].AsInt64(), "not a wrapped-around number")
	assert.Equal(t, "shape-mismatch", attrs(spans[2].Attributes())["error.type"].AsString())
	assert.Equal(t, "non-finite", attrs(spans[3].Attributes())["error.type"].AsString())
	assert.Equal(t, `paramserver: gradient "w"[0] is NaN`, spans[3].Status().Description)
}

func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	rejectionWorkload(t, paramserver.WithMeterProvider(mp))

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	assert.Equal(t, paramserver.ScopeName, rm.ScopeMetrics[0].Scope.Name)
	byName := map[string]metricdata.Metrics{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		byName[m.Name] = m
	}

	sum, ok := byName["syncwatch.paramserver.gradients"].Data.(metricdata.Sum[int64])
	require.True(t, ok)
	counts := map[[2]string]int64{}
	for _, dp := range sum.DataPoints {
		w, _ := dp.Attributes.Value("syncwatch.worker")
		o, _ := dp.Attributes.Value("syncwatch.outcome")
		counts[[2]string{w.Emit(), o.AsString()}] = dp.Value
	}
	assert.Equal(t, map[[2]string]int64{
		{"0", "accepted"}:       5,
		{"1", "accepted"}:       1,
		{"1", "too-stale"}:      1,
		{"1", "future-version"}: 1,
		{"1", "shape-mismatch"}: 1,
		{"1", "non-finite"}:     1,
	}, counts)

	hist, ok := byName["syncwatch.paramserver.staleness"].Data.(metricdata.Histogram[int64])
	require.True(t, ok)
	var n uint64
	for _, dp := range hist.DataPoints {
		n += dp.Count
		assert.Equal(t, []float64{0, 1}, dp.Bounds, "a bucket per staleness up to the bound, then overflow")
	}
	assert.Equal(t, uint64(7), n, "accepted and too-stale gradients are observed")
}
