package barrier

import (
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// DefaultTimeout bounds every wait of a barrier created without
// [WithTimeout]. A barrier never waits forever.
const DefaultTimeout = 10 * time.Minute

// DefaultHistory is how many generations a barrier created without
// [WithHistory] remembers.
const DefaultHistory = 64

type config struct {
	name    string
	timeout time.Duration
	action  func(generation uint64) error
	history int
	tp      trace.TracerProvider
	mp      metric.MeterProvider
}

// An Option configures a barrier; see [New].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithTimeout bounds every generation, and so every wait: a generation
// still incomplete d after its first rank arrived breaks, so no Await
// waits longer than d (or than its context allows, if that is sooner).
// Halfway through, the slow report is made. The default is
// [DefaultTimeout]. A d that is not positive panics.
func WithTimeout(d time.Duration) Option {
	if d <= 0 {
		panic("barrier: non-positive timeout")
	}
	return optionFunc(func(c *config) { c.timeout = d })
}

// WithName names the barrier in errors, reports, waits and telemetry. The
// default is "barrier#N", N unique to the barrier.
func WithName(name string) Option {
	return optionFunc(func(c *config) { c.name = name })
}

// WithAction sets a function run once per generation, when every
// participating rank has arrived and before any of them is released. It
// runs in the goroutine of the last arriver (or of the [Barrier.Leave]
// that completed the generation), with no lock held, so it may use the
// barrier's other methods. If it returns an error or panics, the
// generation breaks with that cause; a panic is then re-raised in the last
// arriver. A nil action is ignored.
func WithAction(action func(generation uint64) error) Option {
	return optionFunc(func(c *config) {
		if action != nil {
			c.action = action
		}
	})
}

// WithHistory sets how many recent generations the barrier remembers for
// [Barrier.History] and broken-generation reports. The default is
// [DefaultHistory]; 0 keeps none. A negative k panics.
func WithHistory(k int) Option {
	if k < 0 {
		panic("barrier: negative history")
	}
	return optionFunc(func(c *config) { c.history = k })
}

// WithTracerProvider sets the provider of the tracer for "barrier wait"
// spans. The default is the global provider. A nil provider is ignored.
// Broken-generation violations are traced by lockorder's report pipeline,
// with the provider given to lockorder.Configure.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	})
}

// WithMeterProvider sets the provider of the meter for the wait-duration
// and straggler-lag histograms. The default is the global provider. A nil
// provider is ignored.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	})
}
