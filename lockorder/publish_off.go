//go:build syncwatch_off

package lockorder

import "context"

// Report does nothing.
func Report(v Violation) {}

// ReportContext does nothing.
func ReportContext(ctx context.Context, v Violation) {}

// Violations returns nil.
func Violations() []Violation { return nil }

// NotKept returns nil.
func NotKept() map[Kind]int { return nil }

// ExitedHoldsDropped returns 0.
func ExitedHoldsDropped() int64 { return 0 }

// Reset does nothing.
func Reset() {}
