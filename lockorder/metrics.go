//go:build !syncwatch_off

package lockorder

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncwatch/syncwatch/internal/class"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// waitBuckets are the bucket boundaries, in seconds, advised for the wait
// histogram: lock waits run from microseconds to seconds, far below the
// SDK's default boundaries (0 to 10000, meant for milliseconds).
var waitBuckets = []float64{
	1e-6, 1e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3,
	0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// waitInstruments are the instruments made from one meter provider.
type waitInstruments struct {
	mp       metric.MeterProvider
	duration metric.Float64Histogram
}

// instruments caches the instruments of the provider used last. Configure
// may change the provider: the cache is rebuilt when the provider differs.
var instruments atomic.Pointer[waitInstruments]

// waitHistogram returns the wait histogram of c's meter provider, creating
// it once per provider, or nil if no provider is set. Two goroutines may
// both create it after a change of provider; both get a working instrument
// (the SDK returns one instrument for identical requests) and the last one
// is kept.
func waitHistogram(c *config) metric.Float64Histogram {
	mp := c.meterProvider
	if mp == nil {
		return nil
	}
	if in := instruments.Load(); in != nil && sameProvider(in.mp, mp) {
		return in.duration
	}
	h, err := mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version)).Float64Histogram(
		MetricWaitDuration,
		metric.WithUnit("s"),
		metric.WithDescription("Duration of contended lock waits, by lock class."),
		metric.WithExplicitBucketBoundaries(waitBuckets...),
	)
	if err != nil {
		// Once per provider: the SDK found the request invalid, and still
		// returns an instrument.
		fmt.Fprintf(os.Stderr, "lockorder: %s: %v\n", MetricWaitDuration, err)
	}
	if h == nil {
		h = noop.Float64Histogram{}
	}
	instruments.Store(&waitInstruments{mp: mp, duration: h})
	return h
}

// sameProvider reports whether a and b are the same provider. Providers
// are pointers in practice; a provider of a type that cannot be compared is
// never the same as another, so its instruments are asked for each time.
func sameProvider(a, b metric.MeterProvider) bool {
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t != nil && t.Comparable() && a == b
}

// recordWaitMetric records a contended wait of l that lasted d.
func recordWaitMetric(c *config, l *class.Lock, d time.Duration) {
	ctx := context.Background()
	h := waitHistogram(c)
	if h == nil || !h.Enabled(ctx) {
		return
	}
	h.Record(ctx, d.Seconds(), classOption(l))
}

// classAttrs caches the measurement option of each class attribute value,
// so that a wait allocates nothing to describe its class. The values are
// the program's class names plus "Mutex" and "RWMutex", a set bounded by
// the program's text; maxClassAttrs bounds it anyway.
var (
	classAttrs  sync.Map // string -> metric.MeasurementOption
	classAttrsN atomic.Int64
)

const maxClassAttrs = 1024

// classOption returns the syncwatch.lock.class attribute of l's waits: the
// class name, or the kind for a zero-value lock, whose class is named after
// its address.
func classOption(l *class.Lock) metric.MeasurementOption {
	name := l.Kind.String()
	if l.Class.Named {
		name = l.Class.Name
	}
	if o, ok := classAttrs.Load(name); ok {
		return o.(metric.MeasurementOption)
	}
	o := metric.WithAttributeSet(attribute.NewSet(attribute.String("syncwatch.lock.class", name)))
	if classAttrsN.Load() < maxClassAttrs {
		if _, loaded := classAttrs.LoadOrStore(name, o); !loaded {
			classAttrsN.Add(1)
		}
	}
	return o
}
