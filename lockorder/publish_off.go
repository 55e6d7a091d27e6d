//go:build syncwatch_off

package lockorder

import "context"

// Report does nothing.
func Report(v Violation) {}

// ReportContext does nothing.
func ReportContext(ctx context.Context, v Violation) {}

// Violations returns nil.
func Violations() []Violation { return nil }

// NotKept returns 0.
func NotKept() int { return 0 }

// Reset does nothing.
func Reset() {}
