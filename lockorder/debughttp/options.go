package debughttp

import "time"

// Defaults of the options.
const (
	// DefaultRefresh is how often the live view's page reloads itself.
	DefaultRefresh = 5 * time.Second
	// DefaultRecent is how many of the latest violations the live view
	// lists.
	DefaultRecent = 50
	// DeadlockGrace is how long a cycle of waits must last before it is
	// a deadlock here: the grace lockorder's monitor gives it before it
	// reports one, since a goroutine outside the cycle may still unlock a
	// Mutex.
	DeadlockGrace = 2 * time.Second
)

type config struct {
	refresh time.Duration
	recent  int
}

func newConfig(opts []Option) config {
	c := config{refresh: DefaultRefresh, recent: DefaultRecent}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// An Option configures the live view; see [View].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithRefresh sets how often the live view's HTML page reloads itself
// (with a meta refresh: no JavaScript); zero turns reloading off. The
// query parameter refresh=SECONDS overrides it per request. The default
// is [DefaultRefresh]. A negative d panics.
func WithRefresh(d time.Duration) Option {
	if d < 0 {
		panic("debughttp: negative refresh")
	}
	return optionFunc(func(c *config) { c.refresh = d })
}

// WithRecent sets how many of the latest violations the live view lists.
// The default is [DefaultRecent]. A negative n panics.
func WithRecent(n int) Option {
	if n < 0 {
		panic("debughttp: negative number of violations")
	}
	return optionFunc(func(c *config) { c.recent = n })
}
