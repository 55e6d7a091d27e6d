//go:build syncwatch_off

package lockorder

import (
	"io"
	"time"
)

// started is when the wait profile, always empty in this build, began.
var started = time.Now()

// WriteWaitProfile writes a valid pprof wait profile with no samples: the
// syncwatch_off build tag removed the instrumentation. It is not gzipped,
// so that this build does not link compress/gzip; go tool pprof reads it
// all the same.
func WriteWaitProfile(w io.Writer) error {
	_, err := w.Write(waitProfileBase(started, time.Now()).Encode())
	return err
}

// ResetWaitProfile does nothing.
func ResetWaitProfile() {}
