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

// Reset does nothing.
func Reset() {}
