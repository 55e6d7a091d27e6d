//go:build syncwatch_off

package lockorder

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// providers is empty: this build traces and measures nothing. A config
// that held the providers would link the type descriptors of every
// interface of the trace and metric APIs, whose methods they name.
type providers struct{}

// WithTracerProvider is accepted and ignored: the syncwatch_off build tag
// removed the telemetry.
func WithTracerProvider(tp trace.TracerProvider) Option { return optionFunc(func(*settings) {}) }

// WithMeterProvider is accepted and ignored: the syncwatch_off build tag
// removed the telemetry.
func WithMeterProvider(mp metric.MeterProvider) Option { return optionFunc(func(*settings) {}) }
