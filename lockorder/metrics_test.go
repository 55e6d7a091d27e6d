//go:build !syncwatch_off

package lockorder_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/syncwatch/syncwatch/lockorder"
)

// meterReader installs a meter provider with a manual reader, a wait
// threshold no test wait reaches, and undoes both at cleanup.
func meterReader(t *testing.T) *sdkmetric.ManualReader {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	lockorder.Configure(lockorder.WithMeterProvider(mp), lockorder.WithWaitThreshold(time.Hour))
	t.Cleanup(func() {
		lockorder.Configure(lockorder.WithMeterProvider(noop.NewMeterProvider()),
			lockorder.WithWaitThreshold(10*time.Millisecond), lockorder.WithMode(lockorder.ModeCheck))
		_ = mp.Shutdown(context.Background())
	})
	return r
}

// waitCounts returns the number of waits in the wait histogram per class,
// checking the instrument's scope and unit.
func waitCounts(t *testing.T, r *sdkmetric.ManualReader) map[string]uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	counts := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != lockorder.MetricWaitDuration {
				continue
			}
			assert.Equal(t, lockorder.ScopeName, sm.Scope.Name)
			assert.Equal(t, lockorder.Version, sm.Scope.Version)
			assert.Equal(t, "s", m.Unit)
			h, ok := m.Data.(metricdata.Histogram[float64])
			require.True(t, ok, "%s is a %T", m.Name, m.Data)
			for _, dp := range h.DataPoints {
				assert.Equal(t, 1e-6, dp.Bounds[0], "the advised bucket boundaries are in seconds")
				class, ok := dp.Attributes.Value("syncwatch.lock.class")
				require.True(t, ok, "no class attribute in %v", dp.Attributes)
				assert.Equal(t, 1, dp.Attributes.Len(), "class is the only attribute")
				counts[class.AsString()] += dp.Count
			}
		}
	}
	return counts
}

func TestWaitHistogramCountsEveryContendedWait(t *testing.T) {
	fresh(t)
	r := meterReader(t)
	named := lockorder.NewMutex("histogram")
	var anon lockorder.Mutex

	named.Lock()
	named.Unlock()
	assert.Empty(t, waitCounts(t, r), "an uncontended Lock records nothing")

	contend(t, named)
	contend(t, named)
	contend(t, &anon)
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	contend(t, named)

	assert.Equal(t, map[string]uint64{"histogram": 3, "Mutex": 1}, waitCounts(t, r),
		"waits far below the span threshold are counted, in check and trace modes; a zero-value lock counts under its kind")
}

// In ModeTrace a reader waits, and is measured, only behind a writer:
// readers that share the lock with other readers record nothing.
func TestTraceModeMeasuresReadersBlockedByAWriter(t *testing.T) {
	fresh(t)
	r := meterReader(t)
	lockorder.Configure(lockorder.WithMode(lockorder.ModeTrace))
	rw := lockorder.NewRWMutex("histogram-rw")

	rw.RLock()
	shared := make(chan struct{})
	go func() {
		defer close(shared)
		rw.RLock() // another reader: no wait
		rw.RUnlock()
	}()
	<-shared
	rw.RUnlock()
	assert.Empty(t, waitCounts(t, r), "readers sharing the lock wait for nothing")

	rw.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		rLockBlocked(rw)
	}()
	waitParked(t, "lockorder_test.rLockBlocked(")
	rw.Unlock()
	<-done
	assert.Equal(t, map[string]uint64{"histogram-rw": 1}, waitCounts(t, r))
}

//go:noinline
func rLockBlocked(rw *lockorder.RWMutex) {
	rw.RLock()
	rw.RUnlock()
}

func TestWaitHistogramFollowsTheConfiguredProvider(t *testing.T) {
	fresh(t)
	first := meterReader(t)
	m := lockorder.NewMutex("histogram-swap")
	contend(t, m)

	second := meterReader(t)
	contend(t, m)
	contend(t, m)

	assert.Equal(t, map[string]uint64{"histogram-swap": 1}, waitCounts(t, first))
	assert.Equal(t, map[string]uint64{"histogram-swap": 2}, waitCounts(t, second))
}

// countingProvider is a meter provider whose histogram counts calls and
// reports whether it is enabled as told.
type countingProvider struct {
	noop.MeterProvider
	meters        atomic.Int32
	name, version atomic.Value
	hist          *countingHistogram
}

func (p *countingProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	p.meters.Add(1)
	p.name.Store(name)
	p.version.Store(metric.NewMeterConfig(opts...).InstrumentationVersion())
	return countingMeter{hist: p.hist}
}

type countingMeter struct {
	noop.Meter
	hist *countingHistogram
}

func (m countingMeter) Float64Histogram(string, ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return m.hist, nil
}

type countingHistogram struct {
	noop.Float64Histogram
	enabled          bool
	checked, records atomic.Int32
	last             atomic.Value // attribute.Set of the last Record
}

func (h *countingHistogram) Enabled(context.Context) bool {
	h.checked.Add(1)
	return h.enabled
}

func (h *countingHistogram) Record(_ context.Context, _ float64, opts ...metric.RecordOption) {
	h.records.Add(1)
	h.last.Store(metric.NewRecordConfig(opts).Attributes())
}

func TestWaitHistogramIsCreatedOncePerProviderAndCheckedFirst(t *testing.T) {
	fresh(t)
	meterReader(t) // for its cleanup
	m := lockorder.NewMutex("histogram-fake")

	off := &countingProvider{hist: &countingHistogram{}}
	lockorder.Configure(lockorder.WithMeterProvider(off))
	for range 3 {
		contend(t, m)
	}
	assert.EqualValues(t, 1, off.meters.Load(), "one meter per provider")
	assert.Equal(t, lockorder.ScopeName, off.name.Load())
	assert.Equal(t, lockorder.Version, off.version.Load())
	assert.EqualValues(t, 3, off.hist.checked.Load())
	assert.Zero(t, off.hist.records.Load(), "a disabled instrument records nothing")

	on := &countingProvider{hist: &countingHistogram{enabled: true}}
	lockorder.Configure(lockorder.WithMeterProvider(on))
	contend(t, m)
	for range 100 {
		m.Lock()
		m.Unlock()
	}
	assert.EqualValues(t, 1, on.meters.Load())
	assert.EqualValues(t, 1, on.hist.checked.Load(), "uncontended Locks never reach the instrument")
	assert.EqualValues(t, 1, on.hist.records.Load())
	assert.Equal(t, attribute.NewSet(attribute.String("syncwatch.lock.class", "histogram-fake")), on.hist.last.Load())
}
