//go:build syncwatch_off

package lockorder

import (
	"io"
	"time"

	"github.com/google/pprof/profile"
)

// started is when the wait profile, always empty in this build, began.
var started = time.Now()

// WriteWaitProfile writes a valid pprof wait profile with no samples: the
// syncwatch_off build tag removed the instrumentation.
func WriteWaitProfile(w io.Writer) error {
	now := time.Now()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "contentions", Unit: "count"},
			{Type: "delay", Unit: "nanoseconds"},
		},
		DefaultSampleType: "delay",
		PeriodType:        &profile.ValueType{Type: "contentions", Unit: "count"},
		Period:            1,
		TimeNanos:         now.UnixNano(),
		DurationNanos:     now.Sub(started).Nanoseconds(),
	}
	return p.Write(w)
}

// ResetWaitProfile does nothing.
func ResetWaitProfile() {}

// WriteDOT writes an empty lock-order graph: nothing is recorded.
func WriteDOT(w io.Writer) error {
	_, err := io.WriteString(w, "digraph lockorder {\n\tnode [shape=box];\n}\n")
	return err
}
