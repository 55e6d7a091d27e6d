//go:build syncwatch_off

package lockorder

import (
	"io"
	"time"

	"github.com/syncwatch/syncwatch/internal/mono"
)

// WriteWaitProfile writes a valid pprof wait profile with no samples,
// covering the time since the process started: the syncwatch_off build
// tag removed the instrumentation. It is not gzipped, so that this build
// does not link compress/gzip; go tool pprof reads it all the same.
func WriteWaitProfile(w io.Writer) error {
	now := time.Now()
	since := now.Add(-mono.Since(0)) // the process's start, read on the monotonic clock
	_, err := w.Write(waitProfileBase(since, now).Encode())
	return err
}

// ResetWaitProfile does nothing.
func ResetWaitProfile() {}
