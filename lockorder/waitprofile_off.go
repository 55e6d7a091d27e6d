//go:build syncwatch_off

package lockorder

import (
	"io"
	"time"
)

// started is when the wait profile, always empty in this build, began.
var started = time.Now()

// WriteWaitProfile writes a valid pprof wait profile with no samples: the
// syncwatch_off build tag removed the instrumentation.
func WriteWaitProfile(w io.Writer) error {
	return waitProfileBase(started, time.Now()).Write(w)
}

// ResetWaitProfile does nothing.
func ResetWaitProfile() {}
