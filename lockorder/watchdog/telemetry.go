package watchdog

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/syncwatch/syncwatch/internal/mono"
	"github.com/syncwatch/syncwatch/lockorder"
)

// ScopeName is the instrumentation scope of the watchdog's meter.
const ScopeName = "github.com/syncwatch/syncwatch/lockorder/watchdog"

// The watchdog's metric instruments, each with the attribute
// syncwatch.loop.name.
const (
	// MetricStalls counts stall episodes: one per [KindStalled] report.
	MetricStalls = "syncwatch.loop.stalls"
	// MetricStalled is a gauge, 1 while the loop is stalled and 0
	// otherwise, observed at each collection.
	MetricStalled = "syncwatch.loop.stalled"
	// MetricPending is a gauge of the loop's pending work, observed at
	// each collection.
	MetricPending = "syncwatch.loop.pending"
)

// telemetry is one loop's instruments.
type telemetry struct {
	stalls metric.Int64Counter
	opts   []metric.AddOption
	reg    metric.Registration // the gauges' callback; nil if none
}

func newTelemetry(l *Loop) *telemetry {
	mp := l.cfg.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(ScopeName, metric.WithInstrumentationVersion(lockorder.Version))
	set := attribute.NewSet(attribute.String("syncwatch.loop.name", l.name))
	t := &telemetry{opts: []metric.AddOption{metric.WithAttributeSet(set)}}
	var err error
	if t.stalls, err = meter.Int64Counter(MetricStalls, metric.WithUnit("{stall}"),
		metric.WithDescription("Stall episodes of a watched loop: work pending and no step for longer than its bound.")); err != nil {
		otel.Handle(err)
	}
	if t.stalls == nil {
		t.stalls = noop.Int64Counter{}
	}
	stalled, err1 := meter.Int64ObservableGauge(MetricStalled, metric.WithUnit("1"),
		metric.WithDescription("1 while a watched loop is stalled, 0 otherwise."))
	pending, err2 := meter.Int64ObservableGauge(MetricPending, metric.WithUnit("{item}"),
		metric.WithDescription("Work pending for a watched loop."))
	if err := errors.Join(err1, err2); err != nil {
		otel.Handle(err)
		return t
	}
	obs := metric.WithAttributeSet(set)
	t.reg, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		lk := l.look(mono.Now())
		var s int64
		if lk.stalled {
			s = 1
		}
		o.ObserveInt64(stalled, s, obs)
		o.ObserveInt64(pending, int64(max(lk.pending, 0)), obs)
		return nil
	}, stalled, pending)
	if err != nil {
		otel.Handle(err)
	}
	return t
}

// stalled counts a stall episode.
func (t *telemetry) stalled() { t.stalls.Add(context.Background(), 1, t.opts...) }

// close unregisters the gauges' callback.
func (t *telemetry) close() {
	if t.reg != nil {
		if err := t.reg.Unregister(); err != nil {
			otel.Handle(err)
		}
	}
}
