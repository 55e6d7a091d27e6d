package lockorder

import (
	"time"

	"github.com/syncwatch/syncwatch/internal/pprofenc"
)

// waitProfileBase returns a profile with the wait profile's types and no
// samples: the whole wait profile in the syncwatch_off build.
func waitProfileBase(since, now time.Time) *pprofenc.Profile {
	return &pprofenc.Profile{
		SampleTypes: []pprofenc.ValueType{
			{Type: "contentions", Unit: "count"},
			{Type: "delay", Unit: "nanoseconds"},
		},
		DefaultSampleType: "delay",
		PeriodType:        pprofenc.ValueType{Type: "contentions", Unit: "count"},
		Period:            1,
		TimeNanos:         now.UnixNano(),
		DurationNanos:     now.Sub(since).Nanoseconds(),
	}
}
