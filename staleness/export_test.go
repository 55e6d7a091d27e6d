package staleness

import "time"

// MaxWaitOf returns the max wait c was created with.
func MaxWaitOf(c *Clock) time.Duration { return c.maxWait }
