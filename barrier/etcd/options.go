package etcd

import (
	"time"

	"github.com/syncwatch/syncwatch/barrier"
)

// DefaultTimeout bounds every wait of a barrier or clock created without
// [WithTimeout]: the same as barrier.DefaultTimeout.
const DefaultTimeout = barrier.DefaultTimeout

// DefaultLeaseTTL is the time to live of a rank's lease without
// [WithLeaseTTL]: a rank whose process dies is noticed about this long
// after its last renewal.
const DefaultLeaseTTL = 10 * time.Second

// DefaultDecideTimeout bounds, without [WithDecideTimeout], the one etcd
// transaction that decides a generation's verdict once a wait has ended.
const DefaultDecideTimeout = 5 * time.Second

// DefaultHistory is how many decided generations a barrier keeps in etcd
// without [WithHistory], for ranks that arrive late.
const DefaultHistory = 16

type config struct {
	name          string
	timeout       time.Duration
	leaseTTL      time.Duration
	decideTimeout time.Duration
	history       int
}

func newConfig(prefix string, opts []Option) config {
	c := config{
		name:          prefix,
		timeout:       DefaultTimeout,
		leaseTTL:      DefaultLeaseTTL,
		decideTimeout: DefaultDecideTimeout,
		history:       DefaultHistory,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// ttlSeconds is the lease TTL in whole seconds, at least 1.
func (c config) ttlSeconds() int64 {
	return max(1, int64((c.leaseTTL+time.Second-1)/time.Second))
}

// An Option configures a [Barrier] or a [Clock].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithName names the barrier or clock in errors, reports and waits. The
// default is its key prefix. Every process should use the same name.
func WithName(name string) Option {
	return optionFunc(func(c *config) { c.name = name })
}

// WithTimeout bounds every wait: a generation still incomplete d after a
// rank arrived breaks, for every rank in every process, and a clock
// Advance gives up after waiting d. The default is [DefaultTimeout]. A d
// that is not positive panics.
func WithTimeout(d time.Duration) Option {
	if d <= 0 {
		panic("barrier/etcd: non-positive timeout")
	}
	return optionFunc(func(c *config) { c.timeout = d })
}

// WithLeaseTTL sets the time to live of each rank's lease, rounded up to
// whole seconds: how long after its process dies, or is cut off from
// etcd, a rank is declared gone. etcd may raise a TTL below its minimum.
// The default is [DefaultLeaseTTL]. A d that is not positive panics.
func WithLeaseTTL(d time.Duration) Option {
	if d <= 0 {
		panic("barrier/etcd: non-positive lease TTL")
	}
	return optionFunc(func(c *config) { c.leaseTTL = d })
}

// WithDecideTimeout bounds the etcd transaction that decides a
// generation's verdict once a wait ended (its timeout, its context, a
// rank gone): an Await returns at most this long after its bound. If etcd
// cannot be reached by then, the Await returns a *[UnavailableError] and
// its next call asks again. The default is [DefaultDecideTimeout]. A d
// that is not positive panics.
func WithDecideTimeout(d time.Duration) Option {
	if d <= 0 {
		panic("barrier/etcd: non-positive decide timeout")
	}
	return optionFunc(func(c *config) { c.decideTimeout = d })
}

// WithHistory sets how many decided generations stay in etcd, so that a
// rank arriving late for one gets its verdict. Older generations are
// deleted by the transaction that decides a new one. The default is
// [DefaultHistory]. A k below 1 panics.
func WithHistory(k int) Option {
	if k < 1 {
		panic("barrier/etcd: history below 1")
	}
	return optionFunc(func(c *config) { c.history = k })
}
