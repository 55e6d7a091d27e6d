package paramserver

import (
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of the options.
const (
	// DefaultLearningRate is the SGD step size without WithLearningRate.
	DefaultLearningRate = 0.01
	// DefaultHistory is the number of versions kept for Watch.
	DefaultHistory = 32
	// DefaultMaxWait bounds a version wait without WithMaxWait.
	DefaultMaxWait = 10 * time.Minute
)

// An Option configures a [Server]. Options that make no sense panic when
// they are made (WithHistory(0)); options that contradict each other panic
// in [New].
type Option interface {
	apply(*config)
}

type config struct {
	maxStaleness uint64
	lr           float32
	lrSet        bool
	update       func(params, grad Params)
	history      int
	aggregate    int
	workers      int // declared with WithWorkers; 0: undeclared
	maxWait      time.Duration
	tp           trace.TracerProvider
	mp           metric.MeterProvider
}

func defaults() config {
	return config{lr: DefaultLearningRate, history: DefaultHistory, maxWait: DefaultMaxWait}
}

// validate panics on options that contradict each other.
func (c *config) validate() {
	if c.update != nil && c.lrSet {
		panic("paramserver: WithLearningRate and WithUpdate both given: the update function owns the step")
	}
	if c.aggregate > 0 && c.maxStaleness > 0 {
		panic(fmt.Sprintf("paramserver: WithAggregation(%d) with WithMaxStaleness(%d): aggregation takes only gradients on the current version",
			c.aggregate, c.maxStaleness))
	}
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithMaxStaleness sets the staleness bound s: a gradient computed on
// version base is applied at version current iff base <= current and
// current-base <= s (see staleness.Policy). The default, 0, is
// synchronous: only gradients on the current version are applied.
func WithMaxStaleness(s uint64) Option {
	return optionFunc(func(c *config) { c.maxStaleness = s })
}

// WithLearningRate sets the step of the default update,
// params[k][i] -= lr * grad[k][i]. The default is [DefaultLearningRate].
// A rate that is not finite and positive panics, as does combining it
// with WithUpdate.
func WithLearningRate(lr float32) Option {
	if math.IsNaN(float64(lr)) || math.IsInf(float64(lr), 0) || lr <= 0 {
		panic(fmt.Sprintf("paramserver: learning rate %v is not finite and positive", lr))
	}
	return optionFunc(func(c *config) { c.lr, c.lrSet = lr, true })
}

// WithUpdate replaces the default SGD step with update. update receives
// fresh copies of the parameters named in grad (and only those) and
// modifies them in place; it must not modify grad, and must not keep
// either map or its slices after it returns (params becomes part of an
// immutable snapshot). It must keep every key and length, or the Apply
// panics.
//
// update runs inside the server's critical section, holding the shard
// locks of grad's keys (every lock, in aggregation mode): it must be quick
// and must not block, take other locks or call the server. If it panics,
// nothing is published, the locks are released and the panic reaches the
// caller of Apply; the server stays consistent. A nil update panics.
func WithUpdate(update func(params, grad Params)) Option {
	if update == nil {
		panic("paramserver: nil update function")
	}
	return optionFunc(func(c *config) { c.update = update })
}

// WithHistory sets how many versions, the current one included, the
// server keeps for [Server.Watch]; the default is [DefaultHistory]. Each
// kept version holds the tensors its update changed, so memory grows with
// n times the size of an update. A watcher that falls more than n
// versions behind gets a *[HistoryError]. n < 1 panics.
func WithHistory(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("paramserver: history of %d versions", n))
	}
	return optionFunc(func(c *config) { c.history = n })
}

// WithAggregation makes the server synchronous, like TensorFlow's
// SyncReplicasOptimizer: gradients computed on the current version are
// collected, and the k-th one completes a round: their average is applied
// as one new version. A gradient on an older version is dropped with a
// *staleness.StaleError and counted; it is never silently discarded. k
// counts gradients, not distinct workers. k < 1 panics, as does
// combining it with a nonzero WithMaxStaleness.
func WithAggregation(k int) Option {
	if k < 1 {
		panic(fmt.Sprintf("paramserver: aggregation of %d gradients", k))
	}
	return optionFunc(func(c *config) { c.aggregate = k })
}

// WithWorkers declares n workers, numbered 0 to n-1. Per-worker state
// (monotonic reads, statistics) is allocated up front, and a worker number
// out of range panics. Without it, a server accepts workers 0 to
// [MaxUndeclaredWorkers]-1 and makes each one's state on its first call.
// n < 1 panics.
func WithWorkers(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("paramserver: %d workers", n))
	}
	return optionFunc(func(c *config) { c.workers = n })
}

// WithMaxWait bounds every version wait (WaitVersion, and Watch's wait for
// each next version) on top of its context; the default is
// [DefaultMaxWait]. A non-positive duration panics: no wait is unbounded.
func WithMaxWait(d time.Duration) Option {
	if d <= 0 {
		panic("paramserver: non-positive max wait")
	}
	return optionFunc(func(c *config) { c.maxWait = d })
}

// WithTracerProvider sets the provider of the tracer for the spans of
// rejected gradients. The default is the global provider. A nil provider
// is ignored.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	})
}

// WithMeterProvider sets the provider of the meter for the gradient
// counter and staleness histogram. The default is the global provider. A
// nil provider is ignored.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	})
}
