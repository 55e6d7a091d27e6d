//go:build syncwatch_off

package lockorder

import "time"

// ReportBlocked reports nothing: nothing is tracked in this build.
func ReportBlocked(minAge time.Duration) int { return 0 }

// ReportBlockedExcept reports nothing: nothing is tracked in this build.
func ReportBlockedExcept(minAge time.Duration, leaks bool, ignore func(Violation) bool) int {
	return 0
}
