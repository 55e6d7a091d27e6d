package watchdog

import (
	"time"

	"go.opentelemetry.io/otel/metric"
)

// DefaultBound is how long a loop with pending work may go without a
// Step, when [New] is given no [WithBound].
const DefaultBound = 30 * time.Second

type config struct {
	bound   time.Duration
	pending func() int
	mp      metric.MeterProvider
}

// An Option configures a loop; see [New].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithBound sets how long the loop may go without a Step while work is
// pending before it is stalled. Pick it well above the longest step the
// loop can legitimately take. The default is [DefaultBound]. A d that is
// not positive panics.
func WithBound(d time.Duration) Option {
	if d <= 0 {
		panic("watchdog: non-positive bound")
	}
	return optionFunc(func(c *config) { c.bound = d })
}

// WithPending sets a function returning how much work is waiting for the
// loop (queued requests, active sequences), for loops whose work is
// counted elsewhere. It is called from the watchdog's checks and from
// [Stalls], never from Step, with no lock of the watchdog held, so it may
// take the program's locks; it should be quick. Work counted with
// [Loop.Begin] and [Loop.End] adds to it. A nil f is ignored.
func WithPending(f func() int) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.pending = f
		}
	})
}

// WithMeterProvider sets the provider of the meter used for the loop's
// metrics. The default is the global provider (otel.GetMeterProvider). A
// nil provider is ignored.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	})
}
