package held

import (
	"bytes"
	"runtime"

	"github.com/syncwatch/syncwatch/internal/goid"
)

// liveGoroutines returns the ids of every goroutine alive now.
func liveGoroutines() map[int64]bool {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	live := make(map[int64]bool)
	for len(buf) > 0 {
		if id := goid.Parse(buf); id != 0 {
			live[id] = true
		}
		i := bytes.Index(buf, []byte("\n\ngoroutine "))
		if i < 0 {
			break
		}
		buf = buf[i+2:]
	}
	return live
}
