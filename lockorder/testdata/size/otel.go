//go:build sizeotel

package main

// The OpenTelemetry API packages whose types lockorder's exported API
// names (Violation.Attrs, WithTracerProvider, WithMeterProvider), so that
// the syncwatch_off build imports them too: with tags sizesync and
// sizeotel, the program weighs what sync plus them weigh, the least the
// syncwatch_off build can.
import (
	_ "go.opentelemetry.io/otel/attribute"
	_ "go.opentelemetry.io/otel/metric"
	_ "go.opentelemetry.io/otel/trace"
)
