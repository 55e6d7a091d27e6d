//go:build !syncwatch_off

package lockorder

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// providers are the OpenTelemetry providers the options set, in config.
type providers struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
}

// WithTracerProvider sets the provider of the tracer used for violation and
// lock-wait spans; a span on behalf of a context (LockContext,
// ReportContext) is a child of the context's span. A nil provider is
// ignored. Until a provider is set nothing is traced.
//
// lockorder does not read OpenTelemetry's global providers: the
// go.opentelemetry.io/otel package that holds them imports net/http, which
// would make every program that uses a Mutex megabytes larger. A program
// that uses the global providers passes them:
//
//	lockorder.Configure(lockorder.WithTracerProvider(otel.GetTracerProvider()),
//		lockorder.WithMeterProvider(otel.GetMeterProvider()))
//
// Called before otel.SetTracerProvider, otel.GetTracerProvider returns a
// provider that forwards to the one set later.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *settings) {
		if tp != nil {
			c.tracerProvider = tp
		}
	})
}

// WithMeterProvider sets the provider of the meter used for lock-wait
// metrics. A nil provider is ignored. Until a provider is set no metric is
// recorded: lockorder does not read OpenTelemetry's global provider (see
// [WithTracerProvider]).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *settings) {
		if mp != nil {
			c.meterProvider = mp
		}
	})
}
