package staleness

import "time"

// DefaultMaxWait is how long [Clock.Advance] waits for slower workers when
// no [WithMaxWait] is given. It is long, so that only a worker that is
// stuck (not one that is merely slow) times out, but it is never infinite.
const DefaultMaxWait = 10 * time.Minute

// An Option configures a [Clock].
type Option interface {
	apply(*config)
}

type config struct {
	maxWait time.Duration
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithMaxWait bounds how long one Advance waits for slower workers, on top
// of its context. The default is [DefaultMaxWait]. A zero or negative
// duration panics: a clock wait is never unbounded.
func WithMaxWait(d time.Duration) Option {
	if d <= 0 {
		panic("staleness: non-positive max wait")
	}
	return optionFunc(func(c *config) { c.maxWait = d })
}
